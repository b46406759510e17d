//! The utilisation bar chart, drawn on the server as SVG with `plotters`:
//! one horizontal bar per room (share of its area's working hours, 0–100 %), so the
//! page needs no script. The SVG carries `role="img"`, an `aria-label` and
//! `<title>`/`<desc>` naming every room's share, for screen readers.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;

use super::domain::Utilisation;
use crate::i18n::I18n;

const WIDTH: u32 = 760;
/// Pixels per room row.
const ROW: u32 = 26;
const BAR: RGBColor = RGBColor(0x1d, 0x4e, 0xd8);

/// The chart as an inline `<svg>` element; `None` without active rooms (or
/// should drawing into memory ever fail: the table holds the same numbers).
pub fn utilisation_svg(report: &Utilisation, i18n: &I18n) -> Option<String> {
    let rooms = &report.rooms;
    if rooms.is_empty() {
        return None;
    }
    let n = rooms.len();
    let height = ROW * n as u32 + 80;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        // An integer range holds both ends: `0..n - 1` is n segments (a
        // single room gets an empty row above it).
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .margin_right(36)
            .x_label_area_size(52)
            .y_label_area_size(90)
            .build_cartesian_2d(0f64..100f64, (0..n.max(2) - 1).into_segmented())
            .ok()?;
        // Row 0 is drawn at the bottom: the first room goes on top.
        let code_at = |i: usize| n.checked_sub(i + 1).and_then(|k| rooms.get(k)).map_or("", |r| r.code.as_str());
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) => code_at(*i).to_owned(),
                _ => String::new(),
            })
            .x_labels(6)
            .x_max_light_lines(1)
            .x_label_formatter(&|x| format!("{x:.0}%"))
            .x_desc(i18n.t("report-chart-axis"))
            .label_style(("sans-serif", 17).into_font().color(&BLACK))
            .axis_desc_style(("sans-serif", 17).into_font().color(&BLACK))
            .draw()
            .ok()?;
        chart
            .draw_series(rooms.iter().rev().enumerate().map(|(i, r)| {
                let share = r.share_percent().clamp(0.0, 100.0);
                let mut bar =
                    Rectangle::new([(0.0, SegmentValue::Exact(i)), (share, SegmentValue::Exact(i + 1))], BAR.filled());
                bar.set_margin(4, 4, 0, 0);
                bar
            }))
            .ok()?;
        root.present().ok()?;
    }
    Some(accessible(svg, report, i18n))
}

/// Names the picture: `role="img"` with a label on the `<svg>` element, and a
/// `<title>` and `<desc>` inside it.
fn accessible(svg: String, report: &Utilisation, i18n: &I18n) -> String {
    let period = format!("{} ~ {}", report.period.from(), report.period.to());
    let title = i18n.t1("report-chart-title", "period", period);
    let desc =
        report.rooms.iter().map(|r| format!("{} {:.1}%", r.code, r.share_percent())).collect::<Vec<_>>().join(", ");
    let Some(open_end) = svg.find('>') else { return svg };
    let (open, rest) = svg.split_at(open_end);
    let open =
        open.replacen("<svg ", &format!("<svg role=\"img\" aria-label=\"{}\" class=\"chart\" ", escape(&title)), 1);
    format!("{open}><title>{}</title><desc>{}</desc>{}", escape(&title), escape(&desc), &rest[1..])
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reports::{Period, RoomUse};

    #[test]
    fn draws_one_labelled_bar_per_room() {
        let room = |code: &str, booked: i64| RoomUse {
            code: code.into(),
            name: format!("회의실 {code}"),
            area: "본관".into(),
            booked_seconds: booked,
            working_booked_seconds: booked,
            working_seconds: 32_400,
            bookings: 1,
            cancellations: 0,
            releases: 0,
            released_seconds: 0,
            reused_seconds: 0,
        };
        let period = Period::parse(Some("2026-11-02"), Some("2026-11-02"), chrono::NaiveDate::MIN).unwrap();
        let one = Utilisation { period, area: None, areas: Vec::new(), rooms: vec![room("A", 16_200)] };
        assert!(
            utilisation_svg(&one, &I18n::new(crate::i18n::Lang::Ko)).unwrap().lines().any(|l| l == "A"),
            "a single room draws"
        );
        let report =
            Utilisation { period, area: None, areas: Vec::new(), rooms: vec![room("A", 16_200), room("B", 0)] };
        let svg = utilisation_svg(&report, &I18n::new(crate::i18n::Lang::Ko)).unwrap();
        let labels = svg.lines().filter(|l| *l == "A" || *l == "B").count();
        assert_eq!(labels, 2, "one label per room, no empty segment");
        assert!(svg.starts_with("<svg role=\"img\" aria-label=\"회의실별 업무시간 이용률 (2026-11-02 ~ 2026-11-02)\""));
        assert!(svg.contains("<desc>A 50.0%, B 0.0%</desc>"));
        assert!(svg.lines().any(|l| l == "A") && svg.lines().any(|l| l == "B"), "{svg}");
        assert!(!svg.contains("style="), "no inline styles (the CSP forbids them)");
    }
}
