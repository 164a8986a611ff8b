fn main() {
    let depth = std::env::args()
        .nth(1)
        .and_then(|d| d.parse().ok())
        .unwrap_or(rookery_engine::bench::BENCH_DEPTH);
    let r = rookery_engine::bench::run(depth, |i, _, n| println!("{i}: {n}"));
    println!("{} nodes {} nps {:?}", r.nodes, r.nps(), r.elapsed);
}
