//! SVG bar charts for the dataset card, drawn with `plotters`' SVG backend (no fonts needed:
//! text is written as SVG `<text>` and laid out by the viewer).

use std::path::Path;

use plotters::prelude::*;

use crate::error::ProductsError;

/// One bar: its label on the x axis and its height.
pub type Bar = (String, u64);

fn chart_error(path: &Path, error: impl std::fmt::Display) -> ProductsError {
    ProductsError::Chart {
        path: path.to_path_buf(),
        reason: error.to_string(),
    }
}

/// Draws a bar chart as SVG text (`path` names the chart in errors; the caller writes it).
/// No bars at all (a file without records) gives an empty chart.
pub fn bar_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    bars: &[Bar],
) -> Result<String, ProductsError> {
    let mut svg = String::new();
    draw(&mut svg, path, title, x_label, y_label, bars)?;
    Ok(svg)
}

fn draw(
    svg: &mut String,
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    bars: &[Bar],
) -> Result<(), ProductsError> {
    let root = SVGBackend::with_string(svg, (900, 480)).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|error| chart_error(path, error))?;
    let count = bars.len().max(1) as u32;
    let highest = bars
        .iter()
        .map(|(_, value)| *value)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (0u32..count).into_segmented(),
            0u64..highest + highest / 10 + 1,
        )
        .map_err(|error| chart_error(path, error))?;
    let label_step = (bars.len() / 12).max(1);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        // Zero labels sends plotters' tick search into an endless loop (an overflow in debug
        // builds): at least one.
        .x_labels(bars.len().clamp(1, 40))
        .x_label_formatter(&|value| match value {
            SegmentValue::CenterOf(index) | SegmentValue::Exact(index) => {
                let index = *index as usize;
                if index.is_multiple_of(label_step) {
                    bars.get(index)
                        .map(|(label, _)| label.clone())
                        .unwrap_or_default()
                } else {
                    String::new()
                }
            }
            SegmentValue::Last => String::new(),
        })
        .draw()
        .map_err(|error| chart_error(path, error))?;
    // Rectangles in bar order rather than plotters' `Histogram`, which sums bars in a
    // `HashMap` and writes them in its random order: the same input gives the same SVG bytes.
    let style = RGBColor(70, 110, 180).filled();
    chart
        .draw_series(bars.iter().enumerate().map(|(index, (_, value))| {
            let index = index as u32;
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(index), 0),
                    (SegmentValue::Exact(index + 1), *value),
                ],
                style,
            );
            bar.set_margin(0, 0, 2, 2);
            bar
        }))
        .map_err(|error| chart_error(path, error))?;
    root.present().map_err(|error| chart_error(path, error))?;
    Ok(())
}

/// Counts `values` into `bins` equal-width bins from 0 to the largest value; labels give each
/// bin's lower bound.
pub fn histogram(values: &[u64], bins: usize) -> Vec<Bar> {
    let bins = bins.max(1);
    let highest = values.iter().copied().max().unwrap_or(0);
    let width = (highest / bins as u64 + 1).max(1);
    let mut counts = vec![0u64; bins];
    for &value in values {
        let bin = ((value / width) as usize).min(bins - 1);
        counts[bin] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(index, count)| (format!("{}", index as u64 * width), count))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_value_once() {
        let bars = histogram(&[0, 1, 5, 9, 10], 5);
        assert_eq!(bars.iter().map(|(_, count)| count).sum::<u64>(), 5);
        assert_eq!(bars[0], ("0".to_owned(), 2));
    }

    #[test]
    fn the_same_bars_give_the_same_svg() {
        let bars: Vec<Bar> = (0..30)
            .map(|index| (index.to_string(), index * 7 % 11))
            .collect();
        let draw = || bar_chart(Path::new("bars.svg"), "t", "x", "y", &bars).unwrap_or_default();
        let first = draw();
        assert!(first.matches("<rect").count() >= bars.len());
        for _ in 0..5 {
            assert_eq!(draw(), first);
        }
    }

    #[test]
    fn chart_is_svg_text() {
        let text = bar_chart(
            Path::new("bars.svg"),
            "title",
            "x",
            "y",
            &[("a".into(), 3), ("b".into(), 5)],
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert!(text.starts_with("<svg") && text.contains("title"));
    }

    /// Issue 13: `rlvr card` on an empty file spun forever drawing a chart without bars.
    #[test]
    fn issue_13_a_chart_without_bars_is_drawn_promptly() {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(bar_chart(Path::new("empty.svg"), "title", "x", "y", &[]));
        });
        let drawn = receiver
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the chart is drawn within a minute");
        let text = drawn.unwrap_or_else(|error| panic!("{error}"));
        assert!(text.starts_with("<svg"));
    }
}
