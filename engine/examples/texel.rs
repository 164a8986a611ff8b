//! Texel tuning: fits the evaluation's linear weights ([`Weights`]) to game
//! results, and writes them as `engine/src/eval/weights.rs`.
//!
//! Usage: `cargo run --release -p rookery-engine --example texel --
//! --data FILE [--data FILE ...] [--epochs N] [--rate R] [--validation PCT]
//! [--l2 L] [--out PATH]` (defaults: 400 epochs, rate 1.0, 10% validation,
//! L2 1e-6, write to
//! standard output). The data is what `selfplay` writes: `FEN | RESULT`
//! lines, the result from White's point of view. Recipe: `tools/README.md`.
//!
//! The idea (Peter Österlund's, for his engine Texel): a good evaluation
//! predicts the result. Map the score `E` (centipawns, White's view) to an
//! expected result `1 / (1 + 10^(-K·E/400))` and minimise the mean squared
//! error against the actual results over many positions; `K` is first
//! fitted to the current weights so that only the shape of the evaluation
//! changes, not its scale.
//!
//! How the fit works here:
//! - The evaluation is linear in its weights before the phase blend: the
//!   middlegame and endgame halves are sums of weight × count. The tuner
//!   reads those counts from the engine itself instead of restating the
//!   evaluation: it raises each weight by one and records, per position,
//!   how much each half moved (`eval::breakdown`). So the fitted model is
//!   exactly the engine's evaluation, whatever its terms.
//! - The non-linear parts stay fixed at their current value (king danger,
//!   the passed pawn's king race), and the drawish scaling keeps the
//!   factor it has with the current weights.
//! - Full-batch gradient descent with Adam on the mean squared error;
//!   an L2 penalty (`--l2`) pulls every weight towards its current value,
//!   and the weights of the epoch with the best held-out error are kept
//!   (early stopping); weights are rounded to integers at the end. The last games of the data
//!   (a share of its positions) are held out, never fitted, and show
//!   whether the gain generalises to games the fit has not seen.

use std::io::Write as _;
use std::process::ExitCode;

use rookery_engine::eval::{self, Breakdown, EvalTables, Weights, WEIGHTS};
use rookery_engine::Position;

struct Options {
    data: Vec<String>,
    epochs: usize,
    rate: f64,
    validation_pct: usize,
    l2: f64,
    out: Option<String>,
}

/// One training position, reduced to what the linear model needs.
struct Sample {
    result: f64,
    phase: f64,
    /// 1, or 1/8 when the drawish scaling applies.
    factor: f64,
    base_mg: f64,
    base_eg: f64,
    /// (weight index, middlegame change, endgame change) per unit of the
    /// weight: the sparse gradient of the two halves.
    terms: Vec<(u16, i16, i16)>,
}

impl Sample {
    /// White's score under `delta` (the weights minus the starting ones).
    fn eval(&self, delta: &[f64]) -> f64 {
        let (mut mg, mut eg) = (self.base_mg, self.base_eg);
        for &(j, dm, de) in &self.terms {
            let d = delta[j as usize];
            mg += d * dm as f64;
            eg += d * de as f64;
        }
        self.blend(mg, eg)
    }

    fn blend(&self, mg: f64, eg: f64) -> f64 {
        let max = Breakdown::MAX_PHASE as f64;
        self.factor * (mg * self.phase + eg * (max - self.phase)) / max
    }
}

fn sigmoid(k: f64, score: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * score / 400.0))
}

fn mse(samples: &[Sample], delta: &[f64], k: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let total: f64 = samples
        .iter()
        .map(|s| (s.result - sigmoid(k, s.eval(delta))).powi(2))
        .sum();
    total / samples.len().max(1) as f64
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(problem) => {
            eprintln!(
                "texel: {problem}\nusage: texel --data FILE [--data FILE ...] [--epochs N] \
                 [--rate R] [--validation PCT] [--l2 L] [--out PATH]"
            );
            return ExitCode::from(2);
        }
    };

    // Read everything, in file order.
    let mut positions: Vec<(Position, f64)> = Vec::new();
    let mut skipped = 0usize;
    for path in &options.data {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("texel: cannot read {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match parse_line(line) {
                Some(entry) => positions.push(entry),
                None => skipped += 1,
            }
        }
    }
    if positions.len() < 100 {
        eprintln!("texel: only {} usable positions", positions.len());
        return ExitCode::FAILURE;
    }
    eprintln!("{} positions ({skipped} lines skipped)", positions.len());

    // The linear model of every position, read off the engine's evaluation.
    let base_tables = EvalTables::new(WEIGHTS.clone());
    let mut samples: Vec<Sample> = positions
        .iter()
        .map(|(pos, result)| {
            let b = eval::breakdown(&base_tables, pos);
            Sample {
                result: *result,
                phase: b.phase as f64,
                factor: if eval::is_drawish(pos, b.blended()) {
                    0.125
                } else {
                    1.0
                },
                base_mg: b.score.0 as f64,
                base_eg: b.score.1 as f64,
                terms: Vec::new(),
            }
        })
        .collect();
    let count = weight_count();
    for j in 0..count {
        let tables = EvalTables::new(nudged(&WEIGHTS, j, 1));
        for ((pos, _), sample) in positions.iter().zip(&mut samples) {
            let d = eval::breakdown(&tables, pos).score - eval::breakdown(&base_tables, pos).score;
            if d.0 != 0 || d.1 != 0 {
                sample.terms.push((
                    j as u16,
                    d.0.clamp(-32_000, 32_000) as i16,
                    d.1.clamp(-32_000, 32_000) as i16,
                ));
            }
        }
    }
    // Hold out the last games of the data, not a random share of the
    // positions: positions of one game share its result, so a random split
    // would let the fit see the answers of its own validation games.
    let validation_len = positions.len() * options.validation_pct / 100;
    let (training, validation) = samples.split_at(positions.len() - validation_len);
    eprintln!(
        "{count} weights, {} training and {} validation positions",
        training.len(),
        validation.len()
    );

    // The scale: the K that best fits the current weights.
    let zero = vec![0.0; count];
    let k = fit_k(training, &zero);
    let (train_before, valid_before) = (mse(training, &zero, k), mse(validation, &zero, k));
    eprintln!("K = {k:.3}; mean squared error {train_before:.6} (validation {valid_before:.6})");

    // Adam on the mean squared error.
    let mut delta = vec![0.0f64; count];
    let (mut m, mut v) = (vec![0.0f64; count], vec![0.0f64; count]);
    let (beta1, beta2, epsilon) = (0.9f64, 0.999f64, 1e-8);
    let scale = k * std::f64::consts::LN_10 / 400.0;
    let (mut best_delta, mut best_valid, mut best_epoch) = (delta.clone(), valid_before, 0);
    for epoch in 1..=options.epochs {
        let mut gradient = vec![0.0f64; count];
        for s in training {
            let p = sigmoid(k, s.eval(&delta));
            // d(error)/d(score), then spread over the weights by the chain
            // rule through the blend.
            let g = 2.0 * (p - s.result) * p * (1.0 - p) * scale;
            for &(j, dm, de) in &s.terms {
                gradient[j as usize] += g * s.blend(dm as f64, de as f64);
            }
        }
        let n = training.len() as f64;
        for j in 0..count {
            // The L2 term pulls each weight back to its starting value: a
            // weight moves only as far as the data insists.
            let g = gradient[j] / n + 2.0 * options.l2 * delta[j];
            m[j] = beta1 * m[j] + (1.0 - beta1) * g;
            v[j] = beta2 * v[j] + (1.0 - beta2) * g * g;
            let m_hat = m[j] / (1.0 - beta1.powi(epoch as i32));
            let v_hat = v[j] / (1.0 - beta2.powi(epoch as i32));
            delta[j] -= options.rate * m_hat / (v_hat.sqrt() + epsilon);
        }
        // Early stopping: keep the weights that predicted the held-out
        // games best (with little data the fit soon learns the training
        // games' noise, and the held-out error turns up again).
        // Without held-out games (`--validation 0`) there is nothing to
        // stop on: the last epoch's weights are kept.
        if epoch % 10 == 0 || epoch == options.epochs {
            let valid = mse(validation, &delta, k);
            if valid < best_valid || validation.is_empty() {
                (best_delta, best_valid, best_epoch) = (delta.clone(), valid, epoch);
            }
            if epoch % 50 == 0 || epoch == options.epochs {
                let train = mse(training, &delta, k);
                eprintln!("epoch {epoch}: {train:.6} (validation {valid:.6})");
            }
        }
    }
    eprintln!("best held-out error at epoch {best_epoch}: {best_valid:.6}");
    let delta = best_delta;

    // Round to whole centipawns; what the engine will really evaluate.
    let mut tuned = WEIGHTS.clone();
    let mut index = 0;
    tuned.for_each_mut(|_, w| {
        *w += delta[index].round() as i32;
        index += 1;
    });
    let mut rounded = vec![0.0; count];
    let (mut original, mut fitted) = (WEIGHTS.clone(), tuned.clone());
    let mut values = Vec::new();
    original.for_each_mut(|_, w| values.push(*w));
    let mut index = 0;
    fitted.for_each_mut(|_, w| {
        rounded[index] = (*w - values[index]) as f64;
        index += 1;
    });
    let (train_after, valid_after) = (mse(training, &rounded, k), mse(validation, &rounded, k));
    eprintln!("rounded: {train_after:.6} (validation {valid_after:.6})");

    let provenance = format!(
        "Tuned by `engine/examples/texel.rs` (recipe: `tools/README.md`) on\n\
         {} self-play positions, epoch {best_epoch} of {} at rate {}, L2 {}, K = {k:.3}. Mean squared\n\
         error {train_before:.6} -> {train_after:.6}; held-out {}: {valid_before:.6} -> {valid_after:.6}.\n\
         Generated file: rerun the tuner rather than editing by hand.",
        training.len(),
        options.epochs,
        options.rate,
        options.l2,
        validation.len()
    );
    let source = tuned.to_rust(&provenance);
    match &options.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, source) {
                eprintln!("texel: cannot write {path}: {e}");
                return ExitCode::FAILURE;
            }
            eprintln!("wrote {path}");
        }
        None => {
            let mut stdout = std::io::stdout();
            if stdout.write_all(source.as_bytes()).is_err() {
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// `FEN | RESULT` with the result `1.0`, `0.5` or `0.0` (White's view).
fn parse_line(line: &str) -> Option<(Position, f64)> {
    let (fen, result) = line.rsplit_once('|')?;
    let result: f64 = result.trim().parse().ok()?;
    if !(0.0..=1.0).contains(&result) {
        return None;
    }
    Some((Position::from_fen(fen.trim()).ok()?, result))
}

fn weight_count() -> usize {
    let mut count = 0;
    WEIGHTS.clone().for_each_mut(|_, _| count += 1);
    count
}

/// `weights` with weight number `index` raised by `by`.
fn nudged(weights: &Weights, index: usize, by: i32) -> Weights {
    let mut out = weights.clone();
    let mut i = 0;
    out.for_each_mut(|_, w| {
        if i == index {
            *w += by;
        }
        i += 1;
    });
    out
}

/// Golden-section search for the K that minimises the error.
fn fit_k(samples: &[Sample], delta: &[f64]) -> f64 {
    let (mut lo, mut hi) = (0.05f64, 4.0f64);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..40 {
        let a = hi - ratio * (hi - lo);
        let b = lo + ratio * (hi - lo);
        if mse(samples, delta, a) < mse(samples, delta, b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        data: Vec::new(),
        epochs: 400,
        rate: 1.0,
        validation_pct: 10,
        l2: 1e-6,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = format!("{flag}: bad value {value:?}");
        match flag.as_str() {
            "--data" => options.data.push(value),
            "--epochs" => options.epochs = value.parse().map_err(|_| bad.clone())?,
            "--rate" => options.rate = value.parse().map_err(|_| bad.clone())?,
            "--validation" => {
                options.validation_pct = value.parse::<usize>().map_err(|_| bad.clone())?.min(90)
            }
            "--l2" => options.l2 = value.parse().map_err(|_| bad.clone())?,
            "--out" => options.out = Some(value),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    if options.data.is_empty() {
        return Err("--data is required".into());
    }
    Ok(options)
}
