//! The report range of a request (`?from=&to=&area=`), read the same by
//! the report routes and pages and the access log (SPEC §12, §26).

use actix_web::HttpRequest;

use crate::reports::domain::{Period, RangeError};
use crate::state::AppState;

/// `?from=…&to=…&area=…` as typed (the first of each; other parameters
/// ignored); [`Period::parse`] decides the range, the report whether the
/// area exists.
#[derive(Debug, Default)]
pub struct RangeQuery {
    pub from: Option<String>,
    pub to: Option<String>,
    pub area: Option<String>,
}

impl RangeQuery {
    pub fn of(req: &HttpRequest) -> RangeQuery {
        let mut q = RangeQuery::default();
        for (name, value) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
            let slot = match &*name {
                "from" => &mut q.from,
                "to" => &mut q.to,
                "area" => &mut q.area,
                _ => continue,
            };
            slot.get_or_insert_with(|| value.into_owned());
        }
        q
    }

    /// The area asked for; empty (the page's "every area") is none.
    pub fn area(&self) -> Option<&str> {
        self.area.as_deref().map(str::trim).filter(|a| !a.is_empty())
    }

    pub fn period(&self, state: &AppState) -> Result<Period, RangeError> {
        let today = state.clock.now().with_timezone(&state.policy().timezone).date_naive();
        Period::parse(self.from.as_deref(), self.to.as_deref(), today)
    }
}
