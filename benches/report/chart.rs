//! SVG charts of the report, drawn with plotters: grouped bars (one group per
//! scenario, one bar per series) and lines over time.

use std::path::Path;

use plotters::prelude::*;

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Grouped bars: `series[i].1[g]` is the value of series `i` in group `g`.
/// Values that are not finite are left out.
pub fn bars(path: &Path, title: &str, y_label: &str, groups: &[String], series: &[(&str, Vec<f64>)]) {
    let width = (160 + groups.len() as u32 * 120).max(640);
    let root = SVGBackend::new(path, (width, 460)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let top = series.iter().flat_map(|(_, v)| v.iter().copied()).filter(|v| v.is_finite()).fold(0.0, f64::max) * 1.35;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(70)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..groups.len() as f64, 0f64..top.max(1e-9))
        .unwrap();
    let labels = groups.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&move |x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 1e-6 && i < labels.len() {
                labels[i].clone()
            } else {
                String::new()
            }
        })
        .y_desc(y_label)
        .draw()
        .unwrap();
    let n = series.len() as f64;
    let slot = 0.8 / n;
    for (i, (name, values)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let rects: Vec<_> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(g, v)| {
                let x0 = g as f64 + 0.1 + slot * i as f64;
                Rectangle::new([(x0, 0.0), (x0 + slot * 0.9, *v)], color.filled())
            })
            .collect();
        chart
            .draw_series(rects)
            .unwrap()
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    legend(&mut chart);
    root.present().unwrap();
}

/// Lines over a shared x axis.
pub fn lines(path: &Path, title: &str, x_label: &str, y_label: &str, series: &[(&str, Vec<(f64, f64)>)]) {
    let root = SVGBackend::new(path, (760, 420)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let points = series.iter().flat_map(|(_, v)| v.iter().copied());
    let (x_min, x_max, y_max) =
        points.fold((0.0f64, 0.0f64, 0.0f64), |(lo, hi, y), (px, py)| (lo.min(px), hi.max(px), y.max(py)));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_min..x_max.max(x_min + 1e-9) * 1.02, 0f64..y_max.max(1e-9) * 1.3)
        .unwrap();
    chart.configure_mesh().x_desc(x_label).y_desc(y_label).draw().unwrap();
    for (i, (name, values)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(values.iter().copied(), color.stroke_width(2)))
            .unwrap()
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(values.iter().map(|p| Circle::new(*p, 3, color.filled()))).unwrap();
    }
    legend(&mut chart);
    root.present().unwrap();
}

/// The legend box, top right (the charts leave head room for it).
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(chart: &mut ChartContext<'a, DB, CT>) {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .unwrap();
}
