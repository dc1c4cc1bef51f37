//! The figure of `mufc unlearn --plot`, after the paper's Fig. 3: on the
//! left, the accumulated removal time of MUFC, of complete retraining and
//! (when given) of DC-KMeans against the request number (or the removal
//! round's, when the privacy policy made some rounds apply several
//! requests: the axis says which), on a logarithmic time axis as in the
//! paper (MUFC is orders of magnitude below retraining and would lie flat
//! on zero on a linear one); on the right, the loss ratio after each
//! request (or round), against the phi_c* of the data before any removal
//! (the axis says so).
//!
//! The backend follows the file's extension: `.svg` or `.png`. Text needs a
//! TrueType font, looked up at run time (`MUFC_FONT`, then common system
//! paths); without one the figure is drawn without text and
//! [`PlotOutcome::text`] says so.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;

use crate::CliError;

/// The series of one unlearning experiment.
///
/// # Example
///
/// ```
/// use mufc_cli::plot::UnlearnSeries;
///
/// let s = UnlearnSeries {
///     mufc_seconds: vec![0.001, 0.002],
///     retrain_seconds: vec![0.1, 0.1],
///     dc_kmeans_seconds: None,
///     loss_ratio: vec![1.25, 1.25, 1.26],
///     per_round: false,
/// };
/// assert_eq!(s.requests(), 2);
/// assert!(s.check().is_ok());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnlearnSeries {
    /// MUFC's time for each request, in seconds (accumulated when drawn).
    pub mufc_seconds: Vec<f64>,
    /// Complete retraining's time for each request, in seconds.
    pub retrain_seconds: Vec<f64>,
    /// DC-KMeans' time for each request, in seconds, when compared.
    pub dc_kmeans_seconds: Option<Vec<f64>>,
    /// The loss ratio before any request (first) and after each request,
    /// against the phi_c* of the data before any removal.
    pub loss_ratio: Vec<f64>,
    /// Whether each entry is a removal round rather than a request: the
    /// privacy policy deferred some requests, and a round applied them
    /// with the one that completed them (the x axes say "removal round").
    pub per_round: bool,
}

impl UnlearnSeries {
    /// The number of requests R.
    pub fn requests(&self) -> usize {
        self.mufc_seconds.len()
    }

    /// Checks the lengths (R times each, R + 1 loss ratios, R >= 1) and
    /// that every value is finite and times are non-negative.
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] naming the series at fault.
    pub fn check(&self) -> Result<(), CliError> {
        let r = self.requests();
        let bad = |name, value: usize, reason| {
            Err(CliError::InvalidParameter {
                name,
                value: value.to_string(),
                reason,
            })
        };
        if r == 0 {
            return bad("requests", 0, "a figure needs at least one request");
        }
        if self.retrain_seconds.len() != r {
            return bad(
                "retraining times",
                self.retrain_seconds.len(),
                "need one per request",
            );
        }
        if let Some(dc) = &self.dc_kmeans_seconds
            && dc.len() != r
        {
            return bad("DC-KMeans times", dc.len(), "need one per request");
        }
        if self.loss_ratio.len() != r + 1 {
            return bad(
                "loss ratios",
                self.loss_ratio.len(),
                "need one before the requests and one after each",
            );
        }
        let times = self
            .mufc_seconds
            .iter()
            .chain(&self.retrain_seconds)
            .chain(self.dc_kmeans_seconds.iter().flatten());
        for (i, &t) in times.enumerate() {
            if !(t >= 0.0 && t.is_finite()) {
                return bad("time", i, "times must be finite and non-negative");
            }
        }
        for (i, &l) in self.loss_ratio.iter().enumerate() {
            if !l.is_finite() {
                return bad("loss ratio", i, "loss ratios must be finite");
            }
        }
        Ok(())
    }
}

/// What [`draw_unlearn_figure`] produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlotOutcome {
    /// Whether the figure has text (titles, ticks, legend): false when no
    /// font was found.
    pub text: bool,
}

/// Draws the figure into `path`, an `.svg` or `.png` file (1200 x 480).
///
/// # Errors
///
/// [`CliError::UnknownFormat`] for another extension, the errors of
/// [`UnlearnSeries::check`], and [`CliError::Plot`] when drawing or writing
/// fails.
///
/// # Example
///
/// ```
/// use mufc_cli::plot::{draw_unlearn_figure, UnlearnSeries};
///
/// let s = UnlearnSeries {
///     mufc_seconds: vec![0.001; 5],
///     retrain_seconds: vec![0.2; 5],
///     dc_kmeans_seconds: Some(vec![0.05; 5]),
///     loss_ratio: vec![1.25, 1.25, 1.26, 1.25, 1.25, 1.24],
///     per_round: false,
/// };
/// let dir = tempfile::tempdir().unwrap();
/// draw_unlearn_figure(&dir.path().join("fig.svg"), &s)?;
/// assert!(draw_unlearn_figure(&dir.path().join("fig.pdf"), &s).is_err());
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn draw_unlearn_figure(path: &Path, series: &UnlearnSeries) -> Result<PlotOutcome, CliError> {
    draw_with(path, series, font_available())
}

fn draw_with(path: &Path, series: &UnlearnSeries, text: bool) -> Result<PlotOutcome, CliError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let is_svg = match ext.as_deref() {
        Some("svg") => true,
        Some("png") => false,
        _ => {
            return Err(CliError::UnknownFormat {
                path: path.to_path_buf(),
                expected: ".svg or .png",
            });
        }
    };
    series.check()?;
    let size = (1200, 480);
    let err = |e: String| CliError::Plot {
        path: path.to_path_buf(),
        message: e,
    };
    if is_svg {
        let root = SVGBackend::new(path, size).into_drawing_area();
        draw_panels(&root, series, text).map_err(err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    } else {
        let root = BitMapBackend::new(path, size).into_drawing_area();
        draw_panels(&root, series, text).map_err(err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(PlotOutcome { text })
}

/// Registers a TrueType font for text once per process; whether one was
/// found.
fn font_available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let mut candidates: Vec<std::path::PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("MUFC_FONT") {
            candidates.push(p.into());
        }
        for p in [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
            "/System/Library/Fonts/Supplemental/Arial.ttf",
            "/Library/Fonts/Arial.ttf",
            "C:\\Windows\\Fonts\\arial.ttf",
        ] {
            candidates.push(p.into());
        }
        candidates.iter().any(|p| {
            std::fs::read(p).is_ok_and(|bytes| {
                // The font must live as long as the process: plotters keeps
                // a `'static` reference in its font table. One font, once.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
        })
    })
}

fn accumulate(xs: &[f64]) -> Vec<f64> {
    xs.iter()
        .scan(0.0, |acc, &x| {
            *acc += x;
            Some(*acc)
        })
        .collect()
}

/// The smallest time the logarithmic axis shows, in seconds. A log scale
/// cannot draw zero (an accumulated time is zero when the first requests
/// cost nothing measurable, e.g. deferred ones): such points are drawn at
/// this floor instead.
const TIME_FLOOR: f64 = 1e-6;

/// The range of the logarithmic time axis: from half the smallest positive
/// time (at least [`TIME_FLOOR`]) to twice the largest, so that every line
/// sits inside with some room; a decade when all times are at the floor.
fn log_time_range<'a>(times: impl Iterator<Item = &'a f64>) -> (f64, f64) {
    let (lo, hi) = times
        .map(|&t| t.max(TIME_FLOOR))
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), t| {
            (lo.min(t), hi.max(t))
        });
    let lo = if lo.is_finite() {
        (lo / 2.0).max(TIME_FLOOR)
    } else {
        TIME_FLOOR
    };
    let hi = (hi * 2.0).max(lo * 10.0);
    (lo, hi)
}

/// A tick label of the time axis: plain seconds from 0.01 s up, to three
/// significant digits (two labels a few percent apart, as a log axis draws
/// them, must not read alike), powers of ten below (the axis spans
/// decades, `0.000001` would be unreadable).
fn format_seconds(t: f64) -> String {
    if t >= 0.01 {
        // `t` is at least 0.01: its magnitude is at least -2.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let decimals = (2.0 - t.log10().floor()).max(0.0) as usize;
        let s = format!("{t:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s
        }
    } else {
        format!("{t:.1e}")
    }
}

/// A request number on the x axis: whole numbers only (between them a
/// tick would repeat its neighbour's label).
fn format_request(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        String::new()
    }
}

/// How many x labels for `r` requests: one per request up to ten, so
/// that the ticks fall on whole numbers.
fn request_labels(r: usize) -> usize {
    (r + 1).min(11)
}

fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &UnlearnSeries,
    text: bool,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (left, right) = root.split_horizontally(600);
    let (x_desc, after) = if s.per_round {
        (
            "removal round (deferred requests applied with the next)",
            "Loss ratio after each round",
        )
    } else {
        ("removal request", "Loss ratio after each request")
    };
    draw_times(&left, s, x_desc, text)?;
    draw_loss(&right, s, x_desc, after, text)
}

/// Left: accumulated removal time.
fn draw_times<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &UnlearnSeries,
    x_desc: &str,
    text: bool,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let r = s.requests();
    let xs = |n: usize| (1..=n).map(|i| i as f64);
    let mufc = accumulate(&s.mufc_seconds);
    let retrain = accumulate(&s.retrain_seconds);
    let dc = s.dc_kmeans_seconds.as_deref().map(accumulate);
    let (t_lo, t_hi) = log_time_range(retrain.iter().chain(&mufc).chain(dc.iter().flatten()));
    let mut b = ChartBuilder::on(area);
    b.margin(15);
    if text {
        b.caption("Accumulated removal time", ("sans-serif", 20))
            .x_label_area_size(40)
            .y_label_area_size(60);
    }
    let mut chart = b
        .build_cartesian_2d(0.0..r as f64, (t_lo..t_hi).log_scale())
        .map_err(e)?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(x_desc)
            .y_desc("seconds (log scale)")
            .x_labels(request_labels(r))
            .x_label_formatter(&|x| format_request(*x))
            .y_label_formatter(&|t| format_seconds(*t));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(e)?;
    let lines: [(&str, RGBColor, Option<&Vec<f64>>); 3] = [
        ("MUFC", RED, Some(&mufc)),
        ("complete retraining", BLUE, Some(&retrain)),
        ("DC-KMeans", GREEN, dc.as_ref()),
    ];
    for (name, color, ys) in lines {
        let Some(ys) = ys else { continue };
        let series = chart
            .draw_series(LineSeries::new(
                xs(r).zip(ys.iter().map(|&t| t.max(TIME_FLOOR))),
                color.stroke_width(2),
            ))
            .map_err(e)?;
        if text {
            series.label(name).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// Right: the loss ratio, request 0 being the model before removals.
fn draw_loss<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &UnlearnSeries,
    x_desc: &str,
    after: &str,
    text: bool,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let r = s.requests();
    let lo = s.loss_ratio.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = s
        .loss_ratio
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.1).max(0.01 * hi.abs().max(1e-9));
    let mut b = ChartBuilder::on(area);
    b.margin(15);
    if text {
        b.caption(after, ("sans-serif", 20))
            .x_label_area_size(40)
            .y_label_area_size(60);
    }
    let mut chart = b
        .build_cartesian_2d(0.0..r as f64, (lo - pad)..(hi + pad))
        .map_err(e)?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(x_desc)
            .y_desc("phi_f / phi_c* (phi_c* before removals)")
            .x_labels(request_labels(r))
            .x_label_formatter(&|x| format_request(*x));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(e)?;
    chart
        .draw_series(LineSeries::new(
            (0..=r).map(|i| i as f64).zip(s.loss_ratio.iter().copied()),
            RED.stroke_width(2),
        ))
        .map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> UnlearnSeries {
        UnlearnSeries {
            mufc_seconds: (0..20).map(|i| 0.001 * f64::from(i % 3)).collect(),
            retrain_seconds: vec![0.25; 20],
            dc_kmeans_seconds: Some(vec![0.05; 20]),
            loss_ratio: (0..=20).map(|i| 1.25 + 0.001 * f64::from(i % 4)).collect(),
            per_round: false,
        }
    }

    fn check_svg(path: &Path) {
        let svg = std::fs::read_to_string(path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        // Four lines: three times and the loss ratio.
        assert!(svg.matches("<polyline").count() >= 4, "{svg}");
    }

    fn check_png(path: &Path) {
        let png = std::fs::read(path).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // The IHDR chunk holds width and height, big-endian.
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(
            u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
            1200
        );
        assert_eq!(
            u32::from_be_bytes([png[20], png[21], png[22], png[23]]),
            480
        );
        assert!(png.len() > 1000);
    }

    #[test]
    fn writes_svg_and_png() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("fig.svg");
        let png = dir.path().join("fig.PNG");
        let outcome = draw_unlearn_figure(&svg, &series()).unwrap();
        check_svg(&svg);
        if outcome.text {
            let text = std::fs::read_to_string(&svg).unwrap();
            assert!(text.contains("complete retraining"));
        }
        draw_unlearn_figure(&png, &series()).unwrap();
        check_png(&png);
        // Without text (no font found) both still draw.
        let svg2 = dir.path().join("plain.svg");
        let png2 = dir.path().join("plain.png");
        assert!(!draw_with(&svg2, &series(), false).unwrap().text);
        draw_with(&png2, &series(), false).unwrap();
        check_svg(&svg2);
        check_png(&png2);
    }

    #[test]
    fn time_axis_is_logarithmic() {
        // Times spanning 1e-5 s to 10 s, zeros included, draw on the log
        // axis: the zeros at the floor, the range covering every line.
        let r = 20;
        let s = UnlearnSeries {
            mufc_seconds: (0..r).map(|i| if i < 2 { 0.0 } else { 1e-5 }).collect(),
            retrain_seconds: vec![0.5; r],
            dc_kmeans_seconds: Some(vec![1e-3; r]),
            loss_ratio: vec![1.3; r + 1],
            per_round: false,
        };
        let dir = tempfile::tempdir().unwrap();
        for name in ["log.svg", "log.png"] {
            let path = dir.path().join(name);
            let outcome = draw_unlearn_figure(&path, &s).unwrap();
            if name.ends_with("svg") {
                check_svg(&path);
                if outcome.text {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(text.contains("seconds (log scale)"));
                }
            } else {
                check_png(&path);
            }
        }
        let close = |(lo, hi): (f64, f64), (a, b): (f64, f64)| {
            assert!(
                (lo - a).abs() <= 1e-12 * a && (hi - b).abs() <= 1e-12 * b,
                "{lo} {hi}"
            );
        };
        close(log_time_range([0.0, 1e-5, 10.0].iter()), (TIME_FLOOR, 20.0));
        close(log_time_range([0.0, 0.0].iter()), (TIME_FLOOR, 1e-5));
        close(log_time_range([].iter()), (TIME_FLOOR, 1e-5));
        close(log_time_range([0.004, 3.0].iter()), (0.002, 6.0));
        assert_eq!(format_seconds(10.0), "10");
        assert_eq!(format_seconds(0.25), "0.25");
        assert_eq!(format_seconds(1e-5), "1.0e-5");
        // Labels a few percent apart stay apart (the audit saw "0.01"
        // twice on a log axis).
        assert_eq!(format_seconds(0.0100), "0.01");
        assert_eq!(format_seconds(0.0105), "0.0105");
        assert_eq!(format_seconds(123.4), "123");
        assert_eq!(format_request(2.0), "2");
        assert_eq!(format_request(2.5), "");
        assert_eq!(request_labels(3), 4);
        assert_eq!(request_labels(100), 11);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fig.svg");
        let mut s = series();
        s.loss_ratio.pop();
        assert!(draw_unlearn_figure(&path, &s).is_err());
        let mut s = series();
        s.retrain_seconds[3] = f64::NAN;
        assert!(draw_unlearn_figure(&path, &s).is_err());
        assert!(draw_unlearn_figure(&path, &UnlearnSeries::default()).is_err());
        assert!(matches!(
            draw_unlearn_figure(&dir.path().join("fig.jpg"), &series()),
            Err(CliError::UnknownFormat { .. })
        ));
        assert!(!path.exists());
    }
}
