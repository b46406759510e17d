//! A booking's history as its page shows it: who changed what, with
//! instants in the configured zone and states in words of the page's language.

use super::words;
use crate::i18n::I18n;
use crate::rooms::domain::Status;
use chrono_tz::Tz;

/// One line of a booking's history as the page shows it.
pub struct HistoryLine {
    pub iso: String,
    pub at: String,
    pub action: String,
    pub actor: String,
    pub detail: String,
}

/// A history value for people: instants in `tz`.
fn shown(tz: Tz, i18n: &I18n, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "—".into(),
        serde_json::Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&tz).format("%m-%d %H:%M").to_string())
            .unwrap_or_else(|_| match Status::parse(s) {
                Some(status) => words::status(i18n, status),
                None => s.clone(),
            }),
        serde_json::Value::Array(items) => items.iter().map(|i| shown(tz, i18n, i)).collect::<Vec<_>>().join("+"),
        other => other.to_string(),
    }
}

/// The history of a booking, its instants in `tz` (the booking's area's).
pub fn history_lines(tz: Tz, i18n: &I18n, events: Vec<crate::history::Event>) -> Vec<HistoryLine> {
    let field = |f: &str| words::field(i18n, f);
    events
        .into_iter()
        .map(|e| {
            let detail = e
                .changes
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let after = shown(tz, i18n, &v["after"]);
                            if v["before"].is_null() {
                                format!("{} {after}", field(k))
                            } else {
                                format!("{} {} → {after}", field(k), shown(tz, i18n, &v["before"]))
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" · ")
                })
                .unwrap_or_default();
            HistoryLine {
                iso: e.at.to_rfc3339(),
                at: e.at.with_timezone(&tz).format("%Y-%m-%d %H:%M").to_string(),
                action: words::action(i18n, e.action),
                actor: match &e.on_behalf_of {
                    Some(person) => {
                        i18n.t2("history-actor-for", "delegate", e.actor.as_str(), "person", person.as_str())
                    }
                    None => e.actor,
                },
                detail,
            }
        })
        .collect()
}
