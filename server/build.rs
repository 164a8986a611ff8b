//! `sqlx::migrate!` embeds the files of `migrations/` at compile time; tell
//! cargo to rebuild when they change, or a new migration would be missed.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
