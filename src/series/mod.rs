//! Recurring series (SPEC §9): a series row, and each occurrence a normal
//! booking with `seriesId`, so every rule, check and route of a booking
//! applies to it. `domain` expands the recurrence; `store` writes a series
//! in one transaction per command.

pub mod domain;
pub mod store;

pub use store::{CancelSeries, ChangeSeries, CreateSeries, Created, OnConflict, Series, SeriesChange};

/// `{series, occurrences}`: the answer of a change or a read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "SeriesWithOccurrences")]
pub struct WithOccurrences {
    pub series: Series,
    pub occurrences: Vec<crate::rooms::Booking>,
}
