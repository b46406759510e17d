//! The translator a page, a mail or an invitation writes its texts with:
//! one language, catalogue keys in, texts out, arguments (names, counts,
//! numbers) through Fluent so each language places and plurals them its own
//! way, and the dates and weekdays of both languages (`2030년 3월 4일 (월)`,
//! `Mon 4 March 2030`; 24-hour clocks in both). Templates call it
//! (`{{ i18n.t("day-title") }}`), so no template holds a language's words.

use std::borrow::Cow;
use std::collections::HashMap;

use chrono::{Datelike, NaiveDate, Weekday};
use fluent_templates::fluent_bundle::FluentValue;

use super::{text, Lang};

/// What a key missing from the catalogue renders as (`⟦key⟧`): visible on
/// the page, and what the language test looks for.
pub const MISSING: char = '⟦';

/// A text in one language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct I18n {
    lang: Lang,
}

/// A value a text takes as an argument: words as they are, numbers as
/// Fluent numbers (so `{ $count -> [one] … *[other] … }` selects).
pub trait Arg {
    fn value(&self) -> FluentValue<'static>;
}

impl Arg for str {
    fn value(&self) -> FluentValue<'static> {
        FluentValue::from(self.to_owned())
    }
}

impl Arg for String {
    fn value(&self) -> FluentValue<'static> {
        FluentValue::from(self.clone())
    }
}

macro_rules! number_args {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            fn value(&self) -> FluentValue<'static> {
                FluentValue::from(*self)
            }
        }
    )*};
}
number_args!(i32, i64, u32, usize);

impl<T: Arg + ?Sized> Arg for &T {
    fn value(&self) -> FluentValue<'static> {
        (**self).value()
    }
}

impl I18n {
    pub const fn new(lang: Lang) -> Self {
        I18n { lang }
    }

    pub fn lang(&self) -> Lang {
        self.lang
    }

    /// The BCP 47 tag (`<html lang>`).
    pub fn tag(&self) -> &'static str {
        self.lang.tag()
    }

    fn lookup(&self, key: &str, args: &[(&str, &dyn Arg)]) -> String {
        let args: HashMap<Cow<'static, str>, FluentValue<'_>> =
            args.iter().map(|(name, value)| (Cow::Owned((*name).to_owned()), value.value())).collect();
        text(self.lang, key, &args).unwrap_or_else(|| {
            tracing::warn!(key, lang = self.lang.tag(), "no text in the catalogue");
            format!("{MISSING}{key}⟧")
        })
    }

    /// The text of `key`.
    pub fn t(&self, key: &str) -> String {
        self.lookup(key, &[])
    }

    /// The text of `key` with one argument.
    pub fn t1(&self, key: &str, name: &str, value: impl Arg) -> String {
        self.lookup(key, &[(name, &value)])
    }

    /// The text of `key` with two arguments.
    pub fn t2(&self, key: &str, n1: &str, v1: impl Arg, n2: &str, v2: impl Arg) -> String {
        self.lookup(key, &[(n1, &v1), (n2, &v2)])
    }

    /// The text of `key` with three arguments (name and value pairs, as a
    /// template writes them).
    #[allow(clippy::too_many_arguments)]
    pub fn t3(&self, key: &str, n1: &str, v1: impl Arg, n2: &str, v2: impl Arg, n3: &str, v3: impl Arg) -> String {
        self.lookup(key, &[(n1, &v1), (n2, &v2), (n3, &v3)])
    }

    /// The text of `key` with any number of named arguments.
    pub fn with(&self, key: &str, args: &[(&str, &dyn Arg)]) -> String {
        self.lookup(key, args)
    }

    /// A weekday's short name (`월`, `Mon`).
    pub fn weekday(&self, day: Weekday) -> String {
        self.t(match day {
            Weekday::Mon => "weekday-mon",
            Weekday::Tue => "weekday-tue",
            Weekday::Wed => "weekday-wed",
            Weekday::Thu => "weekday-thu",
            Weekday::Fri => "weekday-fri",
            Weekday::Sat => "weekday-sat",
            Weekday::Sun => "weekday-sun",
        })
    }

    fn month(&self, month: u32, short: bool) -> String {
        const LONG: [&str; 12] = [
            "month-1", "month-2", "month-3", "month-4", "month-5", "month-6", "month-7", "month-8", "month-9",
            "month-10", "month-11", "month-12",
        ];
        const SHORT: [&str; 12] = [
            "month-short-1",
            "month-short-2",
            "month-short-3",
            "month-short-4",
            "month-short-5",
            "month-short-6",
            "month-short-7",
            "month-short-8",
            "month-short-9",
            "month-short-10",
            "month-short-11",
            "month-short-12",
        ];
        let i = month.clamp(1, 12) as usize - 1;
        self.t(if short { SHORT[i] } else { LONG[i] })
    }

    fn date_args(&self, key: &str, date: NaiveDate, short_month: bool) -> String {
        self.lookup(
            key,
            &[
                ("year", &date.year().to_string()),
                ("month", &date.month().to_string()),
                ("monthName", &self.month(date.month(), short_month)),
                ("day", &date.day().to_string()),
                ("mm", &format!("{:02}", date.month())),
                ("dd", &format!("{:02}", date.day())),
                ("weekday", &self.weekday(date.weekday())),
            ],
        )
    }

    /// A date with its weekday: `2030년 3월 4일 (월)`, `Mon 4 March 2030`.
    pub fn date(&self, date: NaiveDate) -> String {
        self.date_args("date-long", date, false)
    }

    /// A day within a week or a range: `3/4 (월)`, `Mon 4 Mar`.
    pub fn day_in_week(&self, date: NaiveDate) -> String {
        self.date_args("date-day-in-week", date, true)
    }

    /// A short date with its weekday for lists: `2030-03-04 (월)`, `Mon 4 Mar 2030`.
    pub fn date_short(&self, date: NaiveDate) -> String {
        self.date_args("date-short", date, true)
    }

    /// A date in a line with times: `2030-03-04`, `Mon 4 Mar 2030`.
    pub fn date_compact(&self, date: NaiveDate) -> String {
        self.date_args("date-compact", date, true)
    }

    /// A week from its Monday to its Sunday: `2030년 3월 4일 – 3월 10일`,
    /// `4 March – 10 March 2030`.
    pub fn week(&self, monday: NaiveDate, sunday: NaiveDate) -> String {
        self.lookup(
            "date-week",
            &[
                ("year", &monday.year().to_string()),
                ("month", &monday.month().to_string()),
                ("monthName", &self.month(monday.month(), false)),
                ("day", &monday.day().to_string()),
                ("endYear", &sunday.year().to_string()),
                ("endMonth", &sunday.month().to_string()),
                ("endMonthName", &self.month(sunday.month(), false)),
                ("endDay", &sunday.day().to_string()),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_naturally_in_each_language() {
        let d = NaiveDate::from_ymd_opt(2030, 3, 4).unwrap();
        let (ko, en) = (I18n::new(Lang::Ko), I18n::new(Lang::En));
        assert_eq!(ko.date(d), "2030년 3월 4일 (월)");
        assert_eq!(en.date(d), "Mon 4 March 2030");
        assert_eq!(ko.day_in_week(d), "3/4 (월)");
        assert_eq!(en.day_in_week(d), "Mon 4 Mar");
        assert_eq!(ko.date_short(d), "2030-03-04 (월)");
        assert_eq!(en.date_short(d), "Mon 4 Mar 2030");
        assert_eq!(ko.date_compact(d), "2030-03-04");
        assert_eq!(en.date_compact(d), "Mon 4 Mar 2030");
        let sunday = NaiveDate::from_ymd_opt(2030, 3, 10).unwrap();
        assert_eq!(ko.week(d, sunday), "2030년 3월 4일 – 3월 10일");
        assert_eq!(en.week(d, sunday), "4 March – 10 March 2030");
    }

    #[test]
    fn plurals_and_arguments_follow_the_language_and_a_missing_key_shows() {
        let (ko, en) = (I18n::new(Lang::Ko), I18n::new(Lang::En));
        assert_eq!(en.t1("find-found", "count", 1usize), "1 free room");
        assert_eq!(en.t1("find-found", "count", 3usize), "3 free rooms");
        assert_eq!(ko.t1("find-found", "count", 3usize), "빈 회의실 3곳");
        assert_eq!(en.t("no-such-key"), "⟦no-such-key⟧");
        assert!(en.t("no-such-key").starts_with(MISSING));
    }
}
