fn main() {
    let pos = rookery_engine::Position::startpos();
    for depth in 1..=6 {
        println!("{depth}: {}", rookery_engine::perft::perft(&pos, depth));
    }
}
