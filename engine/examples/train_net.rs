//! The evaluation network's trainer: fits a small NNUE-style network to the
//! positions `rookery-engine datagen` writes, and saves it quantised.
//!
//! Usage (the recipe is `scripts/train-net.sh`):
//! `cargo run --release -p rookery-engine --example train_net --
//! --data FILE [--data FILE ...] --out NET [--hidden 128] [--epochs 8]
//! [--batch 4096] [--lr 0.001] [--lr-drop-epoch 4] [--result-weight 0.3]
//! [--validation 5] [--held-out START:COUNT] [--max-positions N] [--seed 1]
//! [--mirror-files 0] [--output-buckets 1] [--threads 1]`
//!
//! Why in Rust in the workspace and not PyTorch (Stockfish's trainer): it
//! reads the records with the generator's own code, it builds with the
//! workspace on these CPU-only machines without a Python stack, and a net
//! this small (two layers, ≤ 32 active inputs a side) trains on a CPU at
//! about a hundred thousand positions a second on one core, by hand-written
//! gradients, as the Rust trainers of other engines do (bullet).
//!
//! **The network**: 768 → N × 2 → 1. Each side sees the board from its
//! own side ("perspective"): one input per (own or enemy, role, square),
//! the square mirrored top to bottom for Black, so both sides share one
//! first layer. A side's *accumulator* is that layer's bias plus the
//! columns of its active inputs — a sum an engine updates incrementally as
//! men move, which is what makes the network cheap in a search. Each
//! accumulator is clipped to [0, 1] (clipped ReLU), the side to move's half
//! first, and one output neuron reads the 2N values. Its output times 400
//! is the evaluation in centipawns for the side to move.
//!
//! **The target** blends the record's two labels, as strong engines do:
//! `(1 − w) · sigmoid(score / K) + w · result`, both for the side to move,
//! `w` the `--result-weight`. `K` turns centipawns into an expected score;
//! it is fitted to the data (the `K` for which the search's own scores best
//! predict the results), so both labels speak the same language. The
//! loss is the mean squared error between `sigmoid(output · 400 / K)` and
//! the target; Adam, the learning rate divided by ten at
//! `--lr-drop-epoch`. The last `--validation` percent of the records (in
//! file order, so whole games but the first) are held out and scored after
//! every epoch, against the hand-written evaluation and the search score on
//! the same positions (`--held-out START:COUNT` holds out those records
//! instead, so that runs on a growing file are scored on the same
//! positions); the epoch with the best held-out loss is the one
//! written (early stopping: with little data the net overfits).
//! `--mirror-files 1` trains on each position without castling rights
//! mirrored left to right half the time (a coin per position and epoch):
//! the same game, so more patterns from the same data.
//!
//! **Quantised file** (little-endian), read by an engine with integer
//! arithmetic only:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..4 | magic `RKNN` |
//! | 4..6 | format version, 1 |
//! | 6..8 | inputs, 768 |
//! | 8..10 | N, the accumulator size of one side |
//! | 10..12 | QA = 255: a clipped value of 1.0 is 255 |
//! | 12..14 | QB = 64: an output weight of 1.0 is 64 |
//! | 14..16 | scale, 400: centipawns per unit of output |
//! | then | first-layer weights, `i16`, 768 rows of N (the row an input adds to an accumulator), × QA |
//! | then | first-layer bias, `i16` × N, × QA |
//! | then | output weights, `i8` × 2N (side to move's half first), × QB |
//! | then | output bias, `i32`, × QA·QB |
//!
//! With `--output-buckets B` (B > 1, a divisor of 32) the file is format
//! version 2: after the 16 bytes above come B (`u16`) and a reserved `u16`
//! (0), and the output weights and the output bias are repeated B times,
//! bucket 0 first (B × 2N `i8`, then B `i32`). Bucket `(men − 1) · B / 32`
//! (`nnue::output_bucket`; 8 buckets: 2–4 men, 5–8, …, 29–32) is the one
//! that reads the accumulators. One bucket writes version 1, exactly as
//! before the option existed.
//!
//! Input index = (0 own man, 1 enemy man) × 384 + role × 64 + square, the
//! square numbered a1 = 0 … h8 = 63 and flipped (`square ^ 56`) for
//! Black's accumulator. Evaluation for the side to move, centipawns:
//! `(Σ clamp(us, 0, QA) · w[..N] + Σ clamp(them, 0, QA) · w[N..] + bias)
//! · scale / (QA · QB)`, `w` and `bias` the position's bucket's. The
//! output weights are kept within ±127/64 while training so they fit
//! `i8`; the trainer checks on the held-out positions that no accumulator
//! leaves `i16` and reports how far the integer network's evaluations are
//! from the float network's.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use arrayvec::ArrayVec;
use rookery_engine::datagen::{read_records, PackedRecord};
use rookery_engine::eval;
use rookery_engine::nnue::{self, KingBuckets, INPUTS};
use rookery_engine::rng::SplitMix64;
use rookery_engine::{Color, Piece, Position, Role, Square};

const QA: i32 = 255;
const QB: i32 = 64;
/// Centipawns per unit of the network's output.
const SCALE: f32 = 400.0;
/// The output weights stay within what `i8` holds after × QB.
const OUTPUT_WEIGHT_LIMIT: f32 = 127.0 / QB as f32;
/// The first layer's weights stay within what `i16` holds after × QA, with
/// room for 32 of them in one accumulator.
const INPUT_WEIGHT_LIMIT: f32 = 32_767.0 / QA as f32 / 32.0;

struct Options {
    data: Vec<String>,
    out: String,
    hidden: usize,
    epochs: usize,
    batch: usize,
    lr: f32,
    lr_drop_epoch: usize,
    result_weight: f32,
    validation_percent: usize,
    /// Records `start .. start + count` (of the readable ones, in file
    /// order) held out instead of the last `validation_percent`.
    held_out: Option<(usize, usize)>,
    max_positions: Option<usize>,
    seed: u64,
    /// Trains on half the positions without castling rights mirrored left
    /// to right (file a ↔ file h), which changes nothing about the game:
    /// more patterns from the same data.
    mirror_files: bool,
    /// Output buckets by the number of men on the board (1: one output
    /// neuron, written as format version 1).
    output_buckets: usize,
    /// The king-bucket layout of the inputs ([`KingBuckets::NONE`]: the
    /// 768 inputs of versions 1 and 2).
    kings: KingBuckets,
    /// Networks (`built-in` or a file) whose held-out loss is printed
    /// beside the baselines, so that a net trained elsewhere is measured
    /// on the same positions; with no `--out`, nothing is trained.
    compare: Vec<String>,
    /// A network (`built-in` or a file) to start from instead of random
    /// weights: its integer weights divided back to floats. A king-bucket
    /// net starts with the source's rows as its factor and every bucket's
    /// own rows at 0, so it starts as the source net (seen mirrored where
    /// the layout mirrors) and learns only how the buckets differ.
    init: Option<String>,
    /// Threads that share each batch's gradient. The batch is cut into
    /// that many consecutive parts, each summed on its own, and the parts
    /// added in order: a net depends on the seed, the data and this
    /// number, never on how the threads were scheduled; one thread gives
    /// the nets of the single-threaded trainer, byte for byte.
    threads: usize,
}

/// One position as the trainer uses it: the active inputs of each side
/// and the two labels for the side to move. Decoded from its record when
/// needed (32 bytes a position in memory, not a few hundred).
#[derive(Clone, Default)]
struct Sample {
    /// Inputs of the side to move's accumulator …
    us: ArrayVec<u16, 32>,
    /// … and of the other side's.
    them: ArrayVec<u16, 32>,
    /// The search score for the side to move, centipawns.
    score: f32,
    /// The result for the side to move: 1, ½ or 0.
    result: f32,
    /// The men on the board (the output bucket's key).
    men: u8,
}

impl Sample {
    /// Fills `self` from `record` with the inputs of the layout `kings`,
    /// mirrored left to right when `mirror_files` (only meant for
    /// positions without castling rights); false for a record that cannot
    /// be read (the loader drops those, so training never meets one).
    fn decode(&mut self, record: &PackedRecord, mirror_files: bool, kings: &KingBuckets) -> bool {
        let (Ok(pieces), Ok(result)) = (record.pieces(), record.result()) else {
            return false;
        };
        let turn = record.turn();
        let file_flip = if mirror_files { 7 } else { 0 };
        // At most 32 men: `pieces` refuses more.
        let men: ArrayVec<(usize, Piece), 32> = pieces
            .map(|(square, piece)| (square.index() ^ file_flip, piece))
            .collect();
        let king = |color: Color| {
            men.iter()
                .find(|(_, piece)| *piece == Piece::new(color, Role::King))
                .map(|&(square, _)| Square::new(square as u8))
        };
        // A record always has both kings (it decodes to a legal position);
        // one that does not is dropped like any unreadable record.
        let (Some(our_king), Some(their_king)) = (king(turn), king(!turn)) else {
            return false;
        };
        let (ours, theirs) = (
            kings.orient(turn, our_king),
            kings.orient(!turn, their_king),
        );
        self.us.clear();
        self.them.clear();
        for &(square, piece) in &men {
            self.us
                .push(KingBuckets::feature(ours, turn, square, piece) as u16);
            self.them
                .push(KingBuckets::feature(theirs, !turn, square, piece) as u16);
        }
        self.men = self.us.len() as u8;
        self.score = f32::from(record.score()) * turn.fold(1.0, -1.0);
        let white = result.white_points();
        self.result = turn.fold(white, 1.0 - white);
        true
    }

    /// The output bucket that reads this position, of `buckets`.
    fn bucket(&self, buckets: usize) -> usize {
        nnue::output_bucket(u32::from(self.men), buckets)
    }

    fn of(record: &PackedRecord, kings: &KingBuckets) -> Sample {
        let mut sample = Sample::default();
        sample.decode(record, false, kings);
        sample
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// One sample's loss for the network output `out`, and its derivative by
/// `out`: `(sigmoid(out · SCALE / K) − target)²`.
fn loss(out: f32, target: f32, k: f32) -> (f32, f32) {
    let p = sigmoid(out * SCALE / k);
    let e = p - target;
    (e * e, 2.0 * e * p * (1.0 - p) * SCALE / k)
}

/// The float network being trained; also the shape of its gradient.
#[derive(Clone)]
struct Network {
    hidden: usize,
    buckets: usize,
    kings: KingBuckets,
    /// `[rows][hidden]`, row-major: `kings.count() × INPUTS` rows, then,
    /// with more than one king bucket, [`INPUTS`] rows of the *factor*.
    input_weights: Vec<f32>,
    input_bias: Vec<f32>,
    /// `[buckets][2 × hidden]`, the side to move's half first.
    output_weights: Vec<f32>,
    /// One per bucket.
    output_bias: Vec<f32>,
}

/// With king buckets each input is seen only when the own king is in its
/// bucket, so a bucket's rows learn from a fraction of the data. The
/// *factor* is a block of 768 rows shared by every bucket: an input's
/// weight is its bucket's row plus the factor's row, so what holds
/// whatever the king's square (a queen is worth a lot) is learnt from all
/// the data, and a bucket's rows only learn how it differs. The file holds
/// the sums (the engine never sees the factor).
fn factorised(kings: &KingBuckets) -> bool {
    kings.count() > 1
}

/// First-layer rows of the float network.
fn rows(kings: &KingBuckets) -> usize {
    (kings.count() + usize::from(factorised(kings))) * INPUTS
}

impl Network {
    fn zeros(hidden: usize, buckets: usize, kings: &KingBuckets) -> Network {
        Network {
            hidden,
            buckets,
            kings: *kings,
            input_weights: vec![0.0; rows(kings) * hidden],
            input_bias: vec![0.0; hidden],
            output_weights: vec![0.0; buckets * 2 * hidden],
            output_bias: vec![0.0; buckets],
        }
    }

    /// Random weights; with one bucket, drawn exactly as before buckets
    /// existed (so a recipe without them still gives the same net). A
    /// factorised net starts with its buckets' rows at 0 and the factor
    /// random: every bucket starts as the same 768-input net.
    fn random(hidden: usize, buckets: usize, kings: &KingBuckets, rng: &mut SplitMix64) -> Network {
        let mut net = Network::zeros(hidden, buckets, kings);
        let mut uniform = |limit: f64| ((rng.next_f64() * 2.0 - 1.0) * limit) as f32;
        let input_limit = 1.0 / (INPUTS as f64).sqrt();
        let random_from = if factorised(kings) {
            kings.count() * INPUTS * hidden
        } else {
            0
        };
        for w in &mut net.input_weights[random_from..] {
            *w = uniform(input_limit);
        }
        let output_limit = 1.0 / (2.0 * hidden as f64).sqrt();
        for w in &mut net.output_weights {
            *w = uniform(output_limit);
        }
        net
    }

    /// The float network a file's integers stand for (see `--init`):
    /// `bytes` is the file, `source` what the engine read from those very
    /// bytes (so its shape and length are checked).
    fn from_file_bytes(
        bytes: &[u8],
        source: &nnue::Network,
        hidden: usize,
        buckets: usize,
        kings: &KingBuckets,
    ) -> Result<Network, String> {
        if source.hidden() != hidden || source.output_buckets() != buckets {
            return Err(format!(
                "--init: the net is {}x2 with {} output bucket(s), not {hidden}x2 with {buckets}",
                source.hidden(),
                source.output_buckets()
            ));
        }
        if *source.king_buckets() != KingBuckets::NONE {
            return Err("--init: a net with king buckets or mirroring cannot be a start".into());
        }
        let header = nnue::file_header(
            hidden,
            buckets,
            source.king_buckets(),
            QA as u16,
            QB as u16,
            SCALE as u16,
        );
        if !bytes.starts_with(&header) {
            return Err("--init: the net was quantised with other constants".into());
        }
        let mut at = header.len();
        let mut i16s = |count: usize| -> Vec<f32> {
            let values = bytes[at..at + 2 * count]
                .chunks_exact(2)
                .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / QA as f32)
                .collect();
            at += 2 * count;
            values
        };
        let first = i16s(INPUTS * hidden);
        let input_bias = i16s(hidden);
        let output_weights = bytes[at..at + buckets * 2 * hidden]
            .iter()
            .map(|&b| f32::from(b as i8) / QB as f32)
            .collect();
        at += buckets * 2 * hidden;
        let output_bias = bytes[at..at + 4 * buckets]
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32 / (QA * QB) as f32)
            .collect();
        let mut net = Network::zeros(hidden, buckets, kings);
        // The source's rows go where every bucket reads them: the factor
        // block of a factorised net, else the one block.
        let block = if factorised(kings) {
            kings.count() * INPUTS * hidden
        } else {
            0
        };
        net.input_weights[block..block + INPUTS * hidden].copy_from_slice(&first);
        net.input_bias = input_bias;
        net.output_weights = output_weights;
        net.output_bias = output_bias;
        Ok(net)
    }

    /// Adds `other` (another thread's gradient) to `self` and sets it
    /// back to zero for the next batch.
    fn add_and_clear(&mut self, other: &mut Network) {
        for (mine, theirs) in self.parts_mut().into_iter().zip(other.parts_mut()) {
            for (m, t) in mine.iter_mut().zip(theirs.iter_mut()) {
                *m += *t;
                *t = 0.0;
            }
        }
    }

    /// The parameters as one list of slices, in a fixed order (for Adam).
    fn parts_mut(&mut self) -> [&mut [f32]; 4] {
        [
            &mut self.input_weights,
            &mut self.input_bias,
            &mut self.output_weights,
            &mut self.output_bias,
        ]
    }

    /// The rows input `i` adds: its own, and the factor's when there is
    /// one.
    fn input_rows(&self, i: u16) -> ArrayVec<usize, 2> {
        let mut rows = ArrayVec::new();
        rows.push(i as usize);
        if factorised(&self.kings) {
            rows.push(self.kings.count() * INPUTS + i as usize % INPUTS);
        }
        rows
    }

    fn accumulate(&self, inputs: &[u16], acc: &mut [f32]) {
        acc.copy_from_slice(&self.input_bias);
        for &i in inputs {
            for r in self.input_rows(i) {
                let row = &self.input_weights[r * self.hidden..][..self.hidden];
                for (a, w) in acc.iter_mut().zip(row) {
                    *a += w;
                }
            }
        }
    }

    /// The output (× SCALE = centipawns for the side to move), with the
    /// two accumulators left in the scratch space.
    fn forward(&self, sample: &Sample, scratch: &mut Scratch) -> f32 {
        let Scratch { us, them, .. } = scratch;
        self.accumulate(&sample.us, us);
        self.accumulate(&sample.them, them);
        let bucket = sample.bucket(self.buckets);
        let weights = &self.output_weights[bucket * 2 * self.hidden..][..2 * self.hidden];
        let (w_us, w_them) = weights.split_at(self.hidden);
        let mut out = self.output_bias[bucket];
        for (a, w) in us.iter().zip(w_us) {
            out += a.clamp(0.0, 1.0) * w;
        }
        for (a, w) in them.iter().zip(w_them) {
            out += a.clamp(0.0, 1.0) * w;
        }
        out
    }

    /// Adds the gradient of one sample's loss (scaled by `d_out`, the
    /// loss's derivative by the output) to `grad`.
    fn backward(&self, sample: &Sample, scratch: &mut Scratch, d_out: f32, grad: &mut Network) {
        let h = self.hidden;
        let bucket = sample.bucket(self.buckets);
        grad.output_bias[bucket] += d_out;
        let offset = bucket * 2 * h;
        let Scratch { us, them, d_acc } = scratch;
        for (side, (acc, inputs)) in [(&*us, &sample.us), (&*them, &sample.them)]
            .into_iter()
            .enumerate()
        {
            let weights = &self.output_weights[offset + side * h..][..h];
            let d_weights = &mut grad.output_weights[offset + side * h..][..h];
            // d(out)/d(acc_j) = w_j where the clip lets acc_j through.
            for j in 0..h {
                let a = acc[j];
                d_weights[j] += d_out * a.clamp(0.0, 1.0);
                d_acc[j] = if a > 0.0 && a < 1.0 {
                    d_out * weights[j]
                } else {
                    0.0
                };
            }
            for (b, d) in grad.input_bias.iter_mut().zip(d_acc.iter()) {
                *b += d;
            }
            for &i in inputs.iter() {
                for r in self.input_rows(i) {
                    let row = &mut grad.input_weights[r * h..][..h];
                    for (g, d) in row.iter_mut().zip(d_acc.iter()) {
                        *g += d;
                    }
                }
            }
        }
    }
}

/// Per-sample working space, allocated once.
struct Scratch {
    us: Vec<f32>,
    them: Vec<f32>,
    d_acc: Vec<f32>,
}

impl Scratch {
    fn new(hidden: usize) -> Scratch {
        Scratch {
            us: vec![0.0; hidden],
            them: vec![0.0; hidden],
            d_acc: vec![0.0; hidden],
        }
    }
}

/// Adam's running moments, one per parameter.
struct Adam {
    first: Network,
    second: Network,
    steps: i32,
}

impl Adam {
    fn new(hidden: usize, buckets: usize, kings: &KingBuckets) -> Adam {
        Adam {
            first: Network::zeros(hidden, buckets, kings),
            second: Network::zeros(hidden, buckets, kings),
            steps: 0,
        }
    }

    fn step(&mut self, net: &mut Network, grad: &mut Network, lr: f32) {
        const BETA1: f32 = 0.9;
        const BETA2: f32 = 0.999;
        const EPSILON: f32 = 1e-8;
        self.steps += 1;
        let correction1 = 1.0 - BETA1.powi(self.steps);
        let correction2 = 1.0 - BETA2.powi(self.steps);
        let limits = [INPUT_WEIGHT_LIMIT, f32::MAX, OUTPUT_WEIGHT_LIMIT, f32::MAX];
        let params = net.parts_mut();
        let grads = grad.parts_mut();
        let firsts = self.first.parts_mut();
        let seconds = self.second.parts_mut();
        for ((((p, g), m), v), limit) in params
            .into_iter()
            .zip(grads)
            .zip(firsts)
            .zip(seconds)
            .zip(limits)
        {
            for i in 0..p.len() {
                m[i] = BETA1 * m[i] + (1.0 - BETA1) * g[i];
                v[i] = BETA2 * v[i] + (1.0 - BETA2) * g[i] * g[i];
                let update = lr * (m[i] / correction1) / ((v[i] / correction2).sqrt() + EPSILON);
                p[i] = (p[i] - update).clamp(-limit, limit);
                g[i] = 0.0;
            }
        }
    }
}

/// The network in integers, as the file holds it.
struct Quantised {
    hidden: usize,
    buckets: usize,
    kings: KingBuckets,
    /// `kings.count() × INPUTS` rows (the factor folded in).
    input_weights: Vec<i16>,
    input_bias: Vec<i16>,
    output_weights: Vec<i8>,
    output_bias: Vec<i32>,
}

impl Quantised {
    fn from_float(net: &Network) -> Quantised {
        let q16 = |w: f32| (w * QA as f32).round().clamp(-32_767.0, 32_767.0) as i16;
        let h = net.hidden;
        let rows = net.kings.count() * INPUTS;
        // Each row of the file: the input's own weights plus the factor's.
        let input_weights = (0..rows * h)
            .map(|at| {
                let factor = match factorised(&net.kings) {
                    true => net.input_weights[rows * h + at % (INPUTS * h)],
                    false => 0.0,
                };
                q16(net.input_weights[at] + factor)
            })
            .collect();
        Quantised {
            hidden: net.hidden,
            buckets: net.buckets,
            kings: net.kings,
            input_weights,
            input_bias: net.input_bias.iter().map(|&w| q16(w)).collect(),
            output_weights: net
                .output_weights
                .iter()
                .map(|&w| (w * QB as f32).round().clamp(-127.0, 127.0) as i8)
                .collect(),
            output_bias: net
                .output_bias
                .iter()
                .map(|&b| (b * (QA * QB) as f32).round() as i32)
                .collect(),
        }
    }

    /// Centipawns for the side to move, and the largest accumulator value
    /// seen in magnitude (an engine adds in `i16`).
    fn evaluate(&self, sample: &Sample) -> (i32, i32) {
        let h = self.hidden;
        let bucket = sample.bucket(self.buckets);
        let mut sum = self.output_bias[bucket];
        let mut largest = 0;
        for (side, inputs) in [&sample.us, &sample.them].into_iter().enumerate() {
            let mut acc: Vec<i32> = self.input_bias.iter().map(|&b| i32::from(b)).collect();
            for &i in inputs {
                let row = &self.input_weights[i as usize * h..][..h];
                for (a, &w) in acc.iter_mut().zip(row) {
                    *a += i32::from(w);
                }
            }
            let weights = &self.output_weights[(bucket * 2 + side) * h..][..h];
            for (&a, &w) in acc.iter().zip(weights) {
                largest = largest.max(a.abs());
                sum += a.clamp(0, QA) * i32::from(w);
            }
        }
        (
            (sum as i64 * SCALE as i64 / i64::from(QA * QB)) as i32,
            largest,
        )
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = nnue::file_header(
            self.hidden,
            self.buckets,
            &self.kings,
            QA as u16,
            QB as u16,
            SCALE as u16,
        );
        for w in self.input_weights.iter().chain(&self.input_bias) {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        bytes.extend(self.output_weights.iter().map(|&w| w as u8));
        for bias in &self.output_bias {
            bytes.extend_from_slice(&bias.to_le_bytes());
        }
        bytes
    }
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(problem) => {
            eprintln!(
                "train_net: {problem}\nusage: train_net --data FILE [--data FILE ...] --out NET \
                 [--hidden N] [--epochs N] [--batch N] [--lr R] [--lr-drop-epoch N] \
                 [--result-weight W] [--validation PCT] [--held-out START:COUNT] \
                 [--max-positions N] [--seed S] [--mirror-files 0|1] [--output-buckets B] \
                 [--king-buckets 0|1|4|8|16|32] [--compare NET ...] [--init NET]"
            );
            return ExitCode::from(2);
        }
    };
    match train(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("train_net: {problem}");
            ExitCode::FAILURE
        }
    }
}

fn train(options: &Options) -> Result<(), String> {
    let started = Instant::now();
    let mut records = Vec::new();
    for path in &options.data {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
        let read = read_records(std::io::BufReader::new(file))
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        println!("{path}: {} records", read.len());
        records.extend(read);
    }
    if let Some(max) = options.max_positions {
        records.truncate(max);
    }
    let before = records.len();
    let mut sample = Sample::default();
    records.retain(|r| sample.decode(r, false, &options.kings));
    let bad = before - records.len();
    let held_out = match options.held_out {
        Some((start, count)) => {
            if start + count > records.len() {
                return Err(format!(
                    "--held-out {start}:{count}: only {} readable records",
                    records.len()
                ));
            }
            move_to_end(&mut records, start, count);
            count
        }
        None => records.len() * options.validation_percent / 100,
    };
    let (training, validation) = records.split_at(records.len() - held_out);
    if training.len() < options.batch || validation.is_empty() {
        return Err(format!(
            "{} positions ({bad} unreadable): too few for batches of {} and a validation share",
            records.len(),
            options.batch
        ));
    }
    let validation: Vec<Sample> = validation
        .iter()
        .map(|r| Sample::of(r, &options.kings))
        .collect();
    let k = fit_k(training);
    println!(
        "{} positions ({bad} unreadable): {} to train on, {} held out; K = {k:.0} \
         (the search's scores predict the results best at that scale)",
        records.len(),
        training.len(),
        validation.len()
    );
    let target = |s: &Sample| {
        (1.0 - options.result_weight) * sigmoid(s.score / k) + options.result_weight * s.result
    };

    // Baselines on the held-out positions: the hand-written evaluation
    // (at the data's K, and at the scale that suits it best, which favours
    // it: that scale is fitted on these very positions), and the search
    // score that made the labels.
    // An evaluation's centipawns on each held-out position (the label's
    // score where a record does not read), and their loss at a scale.
    let held_out_evaluations = |evaluate: &dyn Fn(&Position) -> i32| -> Vec<f32> {
        records[training.len()..]
            .iter()
            .zip(&validation)
            .map(|(record, s)| record.position().map_or(s.score, |p| evaluate(&p) as f32))
            .collect()
    };
    let loss_at = |evaluations: &[f32], scale: f32| {
        mean(&validation, |s, i| {
            let e = sigmoid(evaluations[i] / scale) - target(s);
            e * e
        })
    };
    let hce = held_out_evaluations(&eval::evaluate);
    let hce_loss = |scale: f32| loss_at(&hce, scale);
    let hce_k = golden_section(hce_loss);
    let search_loss = mean(&validation, |s, _| {
        let e = sigmoid(s.score / k) - target(s);
        e * e
    });
    println!(
        "held-out loss of the hand-written evaluation {:.6} ({:.6} at its best scale, \
         K = {hce_k:.0}), of the search score {search_loss:.6}",
        hce_loss(k),
        hce_loss(hce_k)
    );
    for name in &options.compare {
        let other = nnue::named(name).map_err(|e| format!("--compare {name}: {e}"))?;
        let evaluations = held_out_evaluations(&|p| other.evaluate_position(p));
        println!("held-out loss of {name}: {:.6}", loss_at(&evaluations, k));
    }
    if options.out.is_empty() {
        return Ok(());
    }

    let mut rng = SplitMix64::new(options.seed);
    let (hidden, buckets, kings) = (options.hidden, options.output_buckets, &options.kings);
    let mut net = match &options.init {
        None => Network::random(hidden, buckets, kings, &mut rng),
        Some(name) => {
            let bytes = match name.as_str() {
                "built-in" => nnue::BUILT_IN.to_vec(),
                path => std::fs::read(path).map_err(|e| format!("--init {path}: {e}"))?,
            };
            // The engine's reader checks every field and the length.
            let source =
                nnue::Network::from_bytes(&bytes).map_err(|e| format!("--init {name}: {e}"))?;
            Network::from_file_bytes(&bytes, &source, hidden, buckets, kings)?
        }
    };
    let mut grad = Network::zeros(hidden, buckets, kings);
    let mut adam = Adam::new(hidden, buckets, kings);
    let mut order: Vec<u32> = (0..training.len() as u32).collect();
    let mut scratch = Scratch::new(options.hidden);
    // The other threads' gradients and working space, and the batch.
    let mut helpers: Vec<(Network, Scratch)> = (1..options.threads)
        .map(|_| (Network::zeros(hidden, buckets, kings), Scratch::new(hidden)))
        .collect();
    let mut samples = vec![Sample::default(); options.batch];
    let validation_loss = |net: &Network, scratch: &mut Scratch| {
        mean(&validation, |s, _| {
            let e = sigmoid(net.forward(s, scratch) * SCALE / k) - target(s);
            e * e
        })
    };
    let mut best: Option<(usize, f64, Network)> = None;
    if options.init.is_some() {
        println!(
            "start: held-out loss {:.6}",
            validation_loss(&net, &mut scratch)
        );
    }
    for epoch in 1..=options.epochs {
        let epoch_start = Instant::now();
        // Fisher-Yates with the one generator.
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let lr = if epoch > options.lr_drop_epoch {
            options.lr / 10.0
        } else {
            options.lr
        };
        let mut total = 0.0f64;
        for batch in order.chunks(options.batch) {
            // Decoded in order first: the mirroring coins come from the one
            // generator whatever the number of threads.
            for (slot, &index) in samples.iter_mut().zip(batch) {
                let record = &training[index as usize];
                // The coin is drawn only when mirroring, so a net trained
                // without it is the same as before the option existed.
                let mirror = options.mirror_files && !record.may_castle() && rng.below(2) == 1;
                slot.decode(record, mirror, kings);
            }
            let samples = &samples[..batch.len()];
            // The batch's mean loss: each sample a share of the step.
            let share = batch.len() as f32;
            let part = batch.len().div_ceil(options.threads);
            let shared = &net;
            let gradient = |part: &[Sample], grad: &mut Network, scratch: &mut Scratch| {
                let mut sum = 0.0f64;
                for sample in part {
                    let out = shared.forward(sample, scratch);
                    let (error, d_out) = loss(out, target(sample), k);
                    sum += f64::from(error);
                    shared.backward(sample, scratch, d_out / share, grad);
                }
                sum
            };
            let (first, rest) = samples.split_at(part.min(samples.len()));
            total += std::thread::scope(|scope| {
                let others: Vec<_> = rest
                    .chunks(part)
                    .zip(helpers.iter_mut())
                    .map(|(part, (grad, scratch))| scope.spawn(|| gradient(part, grad, scratch)))
                    .collect();
                let mut sum = gradient(first, &mut grad, &mut scratch);
                for other in others {
                    sum += other.join().expect("a gradient thread panicked");
                }
                sum
            });
            for (helper, _) in &mut helpers {
                grad.add_and_clear(helper);
            }
            adam.step(&mut net, &mut grad, lr);
        }
        let seconds = epoch_start.elapsed().as_secs_f64();
        let held_out = validation_loss(&net, &mut scratch);
        println!(
            "epoch {epoch:>3}: lr {lr:.5}, training loss {:.6}, held-out loss {held_out:.6}, \
             {:.0} positions/s",
            total / training.len() as f64,
            training.len() as f64 / seconds
        );
        if best.as_ref().is_none_or(|(_, loss, _)| held_out < *loss) {
            best = Some((epoch, held_out, net.clone()));
        }
    }
    // Early stopping: with little data the net overfits, and the epoch
    // that predicted the held-out games best is the one to keep.
    let Some((best_epoch, best_loss, net)) = best else {
        return Err("no epoch was trained".into());
    };
    println!("kept epoch {best_epoch} (held-out loss {best_loss:.6})");

    let quantised = Quantised::from_float(&net);
    let mut largest = 0;
    let mut differences = Vec::with_capacity(validation.len());
    let mut quantised_loss = 0.0f64;
    for sample in &validation {
        let float_cp = net.forward(sample, &mut scratch) * SCALE;
        let (int_cp, acc) = quantised.evaluate(sample);
        largest = largest.max(acc);
        differences.push((int_cp as f32 - float_cp).abs());
        let e = sigmoid(int_cp as f32 / k) - target(sample);
        quantised_loss += f64::from(e * e);
    }
    differences.sort_by(f32::total_cmp);
    println!(
        "quantised: held-out loss {:.6}; |integer − float| median {:.1} cp, 99th percentile \
         {:.1} cp, largest {:.1} cp; largest accumulator {largest} (i16 holds 32767)",
        quantised_loss / validation.len() as f64,
        differences[differences.len() / 2],
        differences[differences.len() * 99 / 100],
        differences[differences.len() - 1],
    );
    if largest > i32::from(i16::MAX) {
        return Err("an accumulator left i16: not written".into());
    }
    let bytes = quantised.to_bytes();
    // The engine reads the file back and must say exactly what the
    // trainer's integer arithmetic says.
    let engine_net =
        nnue::Network::from_bytes(&bytes).map_err(|e| format!("engine refuses the net: {e}"))?;
    for (record, sample) in records[training.len()..].iter().zip(&validation) {
        if let Ok(position) = record.position() {
            let (ours, _) = quantised.evaluate(sample);
            let engine = engine_net.evaluate_position(&position);
            if ours != engine {
                return Err(format!(
                    "the engine evaluates {} as {engine}, the trainer as {ours}: not written",
                    position.to_fen()
                ));
            }
        }
    }
    let mut file = std::fs::File::create(&options.out)
        .map_err(|e| format!("cannot create {}: {e}", options.out))?;
    file.write_all(&bytes)
        .map_err(|e| format!("cannot write {}: {e}", options.out))?;
    println!(
        "wrote {} ({} bytes, {}x2 hidden, {} king bucket(s){}, {} output bucket{}) in {:.0} s",
        options.out,
        bytes.len(),
        options.hidden,
        options.kings.count(),
        if options.kings.mirrored_files() {
            " mirrored"
        } else {
            ""
        },
        options.output_buckets,
        if options.output_buckets == 1 { "" } else { "s" },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The mean of `f(sample, index)` over `samples`.
fn mean(samples: &[Sample], mut f: impl FnMut(&Sample, usize) -> f32) -> f64 {
    let total: f64 = samples
        .iter()
        .enumerate()
        .map(|(i, s)| f64::from(f(s, i)))
        .sum();
    total / samples.len() as f64
}

/// The scale `K` at which `sigmoid(score / K)` best predicts the results
/// (least squares).
fn fit_k(records: &[PackedRecord]) -> f32 {
    let step = (records.len() / 200_000).max(1);
    let samples: Vec<Sample> = records
        .iter()
        .step_by(step)
        .map(|r| Sample::of(r, &KingBuckets::NONE))
        .collect();
    golden_section(|k| {
        samples
            .iter()
            .map(|s| {
                let e = sigmoid(s.score / k) - s.result;
                f64::from(e * e)
            })
            .sum::<f64>()
    })
}

/// The scale from 50 to 2,000 centipawns where `error` is least
/// (golden-section search: `error` is expected to have one minimum).
fn golden_section(error: impl Fn(f32) -> f64) -> f32 {
    let ratio = (5.0f32.sqrt() - 1.0) / 2.0;
    let (mut low, mut high) = (50.0f32, 2000.0f32);
    for _ in 0..40 {
        let a = high - ratio * (high - low);
        let b = low + ratio * (high - low);
        if error(a) < error(b) {
            high = b;
        } else {
            low = a;
        }
    }
    (low + high) / 2.0
}

/// Moves `items[start .. start + count]` to the end, the rest keeping its
/// order, so that the held-out records are the last ones.
fn move_to_end<T>(items: &mut [T], start: usize, count: usize) {
    items[start..].rotate_left(count);
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        data: Vec::new(),
        out: String::new(),
        hidden: 128,
        epochs: 8,
        batch: 4096,
        lr: 0.001,
        lr_drop_epoch: 4,
        result_weight: 0.3,
        validation_percent: 5,
        held_out: None,
        max_positions: None,
        seed: 1,
        mirror_files: false,
        output_buckets: 1,
        kings: KingBuckets::NONE,
        compare: Vec::new(),
        init: None,
        threads: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = |min: u64, max: u64| -> Result<usize, String> {
            value
                .parse::<u64>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .map(|n| n as usize)
                .ok_or(format!(
                    "{flag}: {value:?} is not a number from {min} to {max}"
                ))
        };
        let fraction = |max: f32| -> Result<f32, String> {
            value
                .parse::<f32>()
                .ok()
                .filter(|x| (0.0..=max).contains(x))
                .ok_or(format!("{flag}: {value:?} is not a number from 0 to {max}"))
        };
        match flag.as_str() {
            "--data" => options.data.push(value.clone()),
            "--out" => options.out = value.clone(),
            // The engine's accumulators go 16 lanes at a time.
            "--hidden" => match number(16, 4096)? {
                n if n % 16 == 0 => options.hidden = n,
                _ => return Err(format!("--hidden: {value} is not a multiple of 16")),
            },
            "--epochs" => options.epochs = number(1, 10_000)?,
            "--batch" => options.batch = number(1, 1 << 24)?,
            "--lr" => options.lr = fraction(1.0)?,
            "--lr-drop-epoch" => options.lr_drop_epoch = number(0, 10_000)?,
            "--result-weight" => options.result_weight = fraction(1.0)?,
            "--validation" => options.validation_percent = number(1, 50)?,
            "--held-out" => {
                let range = value.split_once(':').and_then(|(start, count)| {
                    Some((start.parse::<usize>().ok()?, count.parse::<usize>().ok()?))
                });
                match range {
                    Some((start, count)) if count > 0 => options.held_out = Some((start, count)),
                    _ => {
                        return Err(format!(
                            "--held-out: {value:?} is not START:COUNT (records, COUNT > 0)"
                        ))
                    }
                }
            }
            "--max-positions" => options.max_positions = Some(number(1, u64::MAX)?),
            "--seed" => options.seed = number(0, u64::MAX)? as u64,
            "--mirror-files" => options.mirror_files = number(0, 1)? == 1,
            "--output-buckets" => match number(1, nnue::MAX_OUTPUT_BUCKETS as u64)? {
                n if 32 % n == 0 => options.output_buckets = n,
                _ => return Err(format!("--output-buckets: {value} does not divide 32")),
            },
            "--king-buckets" => {
                options.kings = match number(0, 32)? {
                    0 => KingBuckets::NONE,
                    n => KingBuckets::mirrored(n).ok_or(format!(
                        "--king-buckets: {value} is not 0 (none), 1, 4, 8, 16 or 32"
                    ))?,
                }
            }
            "--compare" => options.compare.push(value.clone()),
            "--init" => options.init = Some(value.clone()),
            "--threads" => options.threads = number(1, 64)?,
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    if options.data.is_empty() || (options.out.is_empty() && options.compare.is_empty()) {
        return Err("--data and --out (or --compare) are required".into());
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rookery_engine::datagen::GameResult;
    use rookery_engine::Position;

    const FENS: [&str; 4] = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 b - - 0 1",
        "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R b KQ - 2 8",
    ];

    fn sample(fen: &str, score: i16) -> Sample {
        sample_with(fen, score, &KingBuckets::NONE)
    }

    fn sample_with(fen: &str, score: i16, kings: &KingBuckets) -> Sample {
        let position = Position::from_fen(fen).unwrap();
        Sample::of(
            &PackedRecord::pack(&position, score, GameResult::WhiteWins).unwrap(),
            kings,
        )
    }

    /// The same position with the colours swapped and the board turned
    /// over: White's men become Black's on the mirrored squares.
    fn mirrored(fen: &str) -> String {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        let swap = |c: char| {
            if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            }
        };
        let board: Vec<String> = fields[0]
            .split('/')
            .rev()
            .map(|rank| rank.chars().map(swap).collect())
            .collect();
        let turn = if fields[1] == "w" { "b" } else { "w" };
        let mut castling: Vec<char> = fields[2].chars().map(swap).collect();
        castling.sort_by_key(|c| (c.is_ascii_lowercase(), *c != 'K' && *c != 'k'));
        let castling: String = castling.into_iter().collect();
        format!("{} {turn} {castling} - 0 1", board.join("/"))
    }

    fn random_net(hidden: usize, buckets: usize, seed: u64) -> Network {
        random_net_with(hidden, buckets, &KingBuckets::NONE, seed)
    }

    /// Random weights everywhere (a factorised net's buckets too, which
    /// training starts at 0), biases spread over the clip.
    fn random_net_with(hidden: usize, buckets: usize, kings: &KingBuckets, seed: u64) -> Network {
        let mut rng = SplitMix64::new(seed);
        let mut net = Network::random(hidden, buckets, kings, &mut rng);
        if factorised(kings) {
            for w in &mut net.input_weights {
                *w = ((rng.next_f64() * 2.0 - 1.0) / (INPUTS as f64).sqrt()) as f32;
            }
        }
        // Biases from -0.3 to 1.3: some accumulators below the clip, most
        // inside it (where gradients flow), some above it.
        for (j, b) in net.input_bias.iter_mut().enumerate() {
            *b = -0.3 + 1.6 * j as f32 / (hidden - 1) as f32;
        }
        for (b, bias) in net.output_bias.iter_mut().enumerate() {
            *bias = 0.05 - 0.02 * b as f32;
        }
        net
    }

    /// `--init`: a file read back into floats and quantised again is the
    /// same file, and a king-bucket net started from it evaluates as the
    /// source wherever its layout does not mirror (both kings on files
    /// e–h).
    #[test]
    fn a_net_started_from_a_file_is_that_file() {
        let bytes = nnue::random_network_file(32, 8, 5);
        let source = nnue::Network::from_bytes(&bytes).unwrap();
        let plain = Network::from_file_bytes(&bytes, &source, 32, 8, &KingBuckets::NONE).unwrap();
        assert_eq!(Quantised::from_float(&plain).to_bytes(), bytes);

        let kings = KingBuckets::mirrored(16).unwrap();
        let bucketed = Network::from_file_bytes(&bytes, &source, 32, 8, &kings).unwrap();
        let engine =
            nnue::Network::from_bytes(&Quantised::from_float(&bucketed).to_bytes()).unwrap();
        for fen in [
            "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2Q1RK1 b - - 2 8",
            "6k1/5ppp/8/8/8/8/5PPP/4R1K1 w - - 0 1",
            "4k3/8/8/3q4/8/8/8/4K2R w K - 0 1",
        ] {
            let position = Position::from_fen(fen).unwrap();
            assert_eq!(
                engine.evaluate_position(&position),
                source.evaluate_position(&position),
                "{fen}"
            );
        }
        // Shapes that do not match are refused.
        assert!(Network::from_file_bytes(&bytes, &source, 64, 8, &KingBuckets::NONE).is_err());
        assert!(Network::from_file_bytes(&bytes, &source, 32, 1, &KingBuckets::NONE).is_err());
    }

    #[test]
    fn held_out_records_move_to_the_end_in_order() {
        let mut items: Vec<u32> = (0..10).collect();
        move_to_end(&mut items, 3, 4);
        assert_eq!(items, [0, 1, 2, 7, 8, 9, 3, 4, 5, 6]);
        let mut items: Vec<u32> = (0..5).collect();
        move_to_end(&mut items, 2, 3);
        assert_eq!(items, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn both_sides_see_a_mirrored_position_alike() {
        let net = random_net(16, 1, 3);
        let mut scratch = Scratch::new(16);
        for fen in FENS {
            let mirror = mirrored(fen);
            let (a, b) = (sample(fen, 0), sample(&mirror, 0));
            // The same inputs (in another order: men are read by square).
            let sorted = |inputs: &ArrayVec<u16, 32>| {
                let mut v = inputs.to_vec();
                v.sort_unstable();
                v
            };
            assert_eq!(sorted(&a.us), sorted(&b.us), "{fen} / {mirror}");
            assert_eq!(sorted(&a.them), sorted(&b.them), "{fen} / {mirror}");
            let out = net.forward(&a, &mut scratch);
            assert!((out - net.forward(&b, &mut scratch)).abs() < 1e-5);
        }
        // Not a network that answers the same for everything.
        let (start, kiwipete) = (sample(FENS[0], 0), sample(FENS[1], 0));
        assert!(
            (net.forward(&start, &mut scratch) - net.forward(&kiwipete, &mut scratch)).abs() > 1e-3
        );
        // Labels turn with the side to move.
        let black = sample(FENS[2], 120);
        assert_eq!((black.score, black.result), (-120.0, 0.0));
    }

    #[test]
    fn a_position_mirrored_left_to_right_has_the_mirrored_inputs() {
        // No castling rights: the mirror is the same game.
        let fen = "r4rk1/1pq2ppp/p1n1b3/3pP3/2pP4/P1N2N2/1P3PPP/R2QR1K1 b - - 3 17";
        let files = "1kr4r/ppp2qp1/3b1n1p/3Pp3/4Pp2/2N2N1P/PPP3P1/1K1RQ2R b - - 3 17";
        let record =
            PackedRecord::pack(&Position::from_fen(fen).unwrap(), 35, GameResult::Draw).unwrap();
        assert!(!record.may_castle());
        let mut mirrored = Sample::default();
        assert!(mirrored.decode(&record, true, &KingBuckets::NONE));
        let expected = sample(files, 35);
        let sorted = |inputs: &ArrayVec<u16, 32>| {
            let mut v = inputs.to_vec();
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(&mirrored.us), sorted(&expected.us));
        assert_eq!(sorted(&mirrored.them), sorted(&expected.them));
        assert_eq!((mirrored.score, mirrored.result), (-35.0, 0.5));
        assert_ne!(
            sorted(&mirrored.us),
            sorted(&Sample::of(&record, &KingBuckets::NONE).us)
        );
        let castling =
            PackedRecord::pack(&Position::from_fen(FENS[0]).unwrap(), 0, GameResult::Draw).unwrap();
        assert!(castling.may_castle());
    }

    /// The hand-written gradient against the slope of the loss itself,
    /// parameter by parameter (the network is piecewise linear, so a small
    /// step away from a clip's corner measures the slope exactly up to
    /// rounding).
    #[test]
    fn gradients_match_finite_differences() {
        // With one output bucket, and with four (the positions have 32, 32,
        // 10 and 30 men: buckets 3 and 1 are trained, 0 and 2 are not).
        // And with king buckets: 16 mirrored (factorised: the bucket's row
        // and the factor's both learn), 1 mirrored (no factor).
        for (buckets, kings) in [(1, 0), (4, 0), (4, 16), (1, 1)] {
            let kings = match kings {
                0 => KingBuckets::NONE,
                n => KingBuckets::mirrored(n).unwrap(),
            };
            gradients_match(buckets, &kings);
        }
    }

    fn gradients_match(buckets: usize, kings: &KingBuckets) {
        let hidden = 8;
        let k = 150.0;
        let mut net = random_net_with(hidden, buckets, kings, 11);
        let samples: Vec<Sample> = FENS.iter().map(|f| sample_with(f, 35, kings)).collect();
        let mut scratch = Scratch::new(hidden);
        let total_loss = |net: &Network, scratch: &mut Scratch| -> f64 {
            samples
                .iter()
                .map(|s| f64::from(loss(net.forward(s, scratch), 0.7, k).0))
                .sum()
        };
        let mut grad = Network::zeros(hidden, buckets, kings);
        for s in &samples {
            let out = net.forward(s, &mut scratch);
            let d_out = loss(out, 0.7, k).1;
            net.backward(s, &mut scratch, d_out, &mut grad);
        }
        let active = net.input_rows(samples[1].us[3]);
        assert_eq!(active.len(), 1 + usize::from(factorised(kings)));
        let checks: Vec<(usize, usize)> = active
            .iter()
            .flat_map(|&row| (0..hidden).map(move |j| (0, row * hidden + j)))
            .chain((0..hidden).map(|j| (1, j)))
            .chain((0..buckets * 2 * hidden).map(|j| (2, j)))
            .chain((0..buckets).map(|b| (3, b)))
            .collect();
        let mut compared = 0;
        for (part, index) in checks {
            let analytic = f64::from(grad.parts_mut()[part][index]);
            let h = 1e-3;
            let original = net.parts_mut()[part][index];
            net.parts_mut()[part][index] = original + h;
            let up = total_loss(&net, &mut scratch);
            net.parts_mut()[part][index] = original - h;
            let down = total_loss(&net, &mut scratch);
            net.parts_mut()[part][index] = original;
            let numeric = (up - down) / (2.0 * f64::from(h));
            assert!(
                // The forward pass adds in f32: a step of 1e-3 moves the
                // output by about 1e-4, measured to a few parts in a
                // thousand.
                (numeric - analytic).abs() <= 5e-3 * analytic.abs().max(1e-2),
                "part {part} index {index}: numeric {numeric}, backward {analytic}"
            );
            compared += usize::from(analytic != 0.0);
        }
        assert!(compared > hidden, "only {compared} non-zero gradients");
    }

    #[test]
    fn the_integer_network_follows_the_float_one_and_the_layout() {
        for buckets in [1, 8] {
            integer_network_follows(buckets);
        }
        // King buckets: the factor folded into each bucket's rows, the
        // engine's reading of the file (format 3) equal to the trainer's.
        for kings in [1, 16, 32] {
            let kings = KingBuckets::mirrored(kings).unwrap();
            let net = random_net_with(32, 8, &kings, 6);
            let quantised = Quantised::from_float(&net);
            let engine = nnue::Network::from_bytes(&quantised.to_bytes()).unwrap();
            assert_eq!(engine.king_buckets(), &kings);
            let mut scratch = Scratch::new(32);
            for fen in FENS {
                let s = sample_with(fen, 0, &kings);
                let (ours, _) = quantised.evaluate(&s);
                let float_cp = net.forward(&s, &mut scratch) * SCALE;
                assert!((ours as f32 - float_cp).abs() < 16.0, "{fen}");
                let position = Position::from_fen(fen).unwrap();
                assert_eq!(engine.evaluate_position(&position), ours, "{fen}");
            }
        }
    }

    fn integer_network_follows(buckets: usize) {
        let hidden = 32;
        let net = random_net(hidden, buckets, 5);
        let quantised = Quantised::from_float(&net);
        let mut scratch = Scratch::new(hidden);
        for fen in FENS {
            let s = sample(fen, 0);
            let float_cp = net.forward(&s, &mut scratch) * SCALE;
            let (int_cp, largest) = quantised.evaluate(&s);
            assert!(
                // A random net's output weights are small (±8 in i8), so
                // rounding each to 1/64 costs up to 6% of it: trained
                // nets' weights are larger and closer.
                (int_cp as f32 - float_cp).abs() < 16.0,
                "{fen}: {int_cp} against {float_cp}"
            );
            assert!(largest < i32::from(i16::MAX));
        }
        let bytes = quantised.to_bytes();
        // The engine's reading of the file evaluates exactly as the trainer.
        let engine = nnue::Network::from_bytes(&bytes).unwrap();
        for fen in FENS {
            let position = Position::from_fen(fen).unwrap();
            let (ours, _) = quantised.evaluate(&sample(fen, 0));
            assert_eq!(engine.evaluate_position(&position), ours, "{fen}");
        }
        // Version 1 (16 bytes of header) for one bucket, version 2 (20)
        // for more.
        let header = if buckets == 1 { 16 } else { 20 };
        assert_eq!(
            bytes.len(),
            header + INPUTS * hidden * 2 + hidden * 2 + buckets * (2 * hidden + 4)
        );
        assert_eq!(&bytes[..4], b"RKNN");
        let field = |i: usize| u16::from_le_bytes([bytes[4 + 2 * i], bytes[5 + 2 * i]]);
        let version = if buckets == 1 { 1 } else { 2 };
        assert_eq!(
            (0..6).map(field).collect::<Vec<_>>(),
            [version, INPUTS as u16, hidden as u16, 255, 64, 400]
        );
        if buckets > 1 {
            assert_eq!(field(6), buckets as u16);
        }
        // The first row (own pawn on a1) and the last bucket's output bias
        // at the end.
        assert_eq!(
            i16::from_le_bytes([bytes[header], bytes[header + 1]]),
            quantised.input_weights[0]
        );
        let tail: [u8; 4] = bytes[bytes.len() - 4..].try_into().unwrap();
        assert_eq!(
            Some(&i32::from_le_bytes(tail)),
            quantised.output_bias.last()
        );
    }

    /// The whole trainer, twice, on a small data file the generator makes
    /// here: the same data and seed give the same file byte for byte (a
    /// king-bucket net and a plain one), another seed another net.
    #[test]
    fn the_trainer_reproduces_its_net_byte_for_byte() {
        use rookery_engine::datagen::{self, DataFile, RunOptions, Settings};
        use std::sync::atomic::AtomicBool;
        let dir = std::env::temp_dir().join(format!("rookery-train-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("selfplay.bin");
        let _ = std::fs::remove_file(&data); // left from an earlier run, or absent
        let (mut file, _) = DataFile::open(&data).unwrap();
        let settings = Settings {
            nodes: 200,
            hash_mb: 1,
            max_plies: 120,
            ..Settings::default()
        };
        let stop = AtomicBool::new(false);
        let options = RunOptions {
            threads: 1,
            target: Some(3_000),
            stop: &stop,
            report_every: std::time::Duration::from_secs(3600),
        };
        datagen::generate(&settings, &[], &mut file, &options, |_| {}).unwrap();
        drop(file);

        let train_with = |name: &str, kings: KingBuckets, seed: u64, threads: usize| -> Vec<u8> {
            let out = dir.join(name);
            let options = Options {
                data: vec![data.to_string_lossy().into_owned()],
                out: out.to_string_lossy().into_owned(),
                hidden: 16,
                epochs: 2,
                batch: 256,
                lr: 0.001,
                lr_drop_epoch: 1,
                result_weight: 0.3,
                validation_percent: 10,
                held_out: None,
                max_positions: None,
                seed,
                mirror_files: true,
                output_buckets: 8,
                kings,
                compare: Vec::new(),
                init: None,
                threads,
            };
            train(&options).unwrap();
            std::fs::read(out).unwrap()
        };
        let train_to = |name: &str, kings: KingBuckets, seed: u64| train_with(name, kings, seed, 1);
        let kings = KingBuckets::mirrored(16).unwrap();
        let first = train_to("a.nnue", kings, 1);
        let second = train_to("b.nnue", kings, 1);
        assert!(first == second, "two trainings from one seed differ");
        assert_eq!(u16::from_le_bytes([first[4], first[5]]), 3, "format 3");
        assert_eq!(
            nnue::Network::from_bytes(&first).unwrap().king_buckets(),
            &kings
        );
        assert!(
            train_to("c.nnue", kings, 2) != first,
            "another seed, another net"
        );
        let plain = train_to("d.nnue", KingBuckets::NONE, 1);
        assert_eq!(plain, train_to("e.nnue", KingBuckets::NONE, 1));
        assert_eq!(u16::from_le_bytes([plain[4], plain[5]]), 2, "format 2");
        // Threads share a batch: the net may depend on their number (the
        // parts' sums are added in another order), never on how they ran.
        let threaded = train_with("f.nnue", kings, 1, 3);
        assert!(
            threaded == train_with("g.nnue", kings, 1, 3),
            "two 3-thread trainings differ"
        );
        assert_eq!(threaded.len(), first.len());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
