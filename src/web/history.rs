//! A booking's history as its page shows it: who changed what, with
//! instants in the configured zone and states in words.

use crate::rooms::domain::Status;
use crate::state::AppState;

/// One line of a booking's history as the page shows it.
pub struct HistoryLine {
    pub iso: String,
    pub at: String,
    pub action: &'static str,
    pub actor: String,
    pub detail: String,
}

/// A history value for people: instants in the configured zone.
fn shown(state: &AppState, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "—".into(),
        serde_json::Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&state.policy().timezone).format("%m-%d %H:%M").to_string())
            .unwrap_or_else(|_| match Status::parse(s) {
                Some(status) => status.label().to_owned(),
                None => s.clone(),
            }),
        serde_json::Value::Array(items) => items.iter().map(|i| shown(state, i)).collect::<Vec<_>>().join("+"),
        other => other.to_string(),
    }
}

pub fn history_lines(state: &AppState, events: Vec<crate::history::Event>) -> Vec<HistoryLine> {
    let field = |f: &str| {
        match f {
            "title" => "제목",
            "rooms" => "회의실",
            "startsAt" => "시작",
            "endsAt" => "끝",
            "status" => "상태",
            "checkedInAt" => "체크인",
            "releasedAt" => "반납",
            "reason" => "사유",
            other => other,
        }
        .to_owned()
    };
    events
        .into_iter()
        .map(|e| {
            let detail = e
                .changes
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let after = shown(state, &v["after"]);
                            if v["before"].is_null() {
                                format!("{} {after}", field(k))
                            } else {
                                format!("{} {} → {after}", field(k), shown(state, &v["before"]))
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" · ")
                })
                .unwrap_or_default();
            HistoryLine {
                iso: e.at.to_rfc3339(),
                at: e.at.with_timezone(&state.policy().timezone).format("%Y-%m-%d %H:%M").to_string(),
                action: e.action.label(),
                actor: e.actor,
                detail,
            }
        })
        .collect()
}
