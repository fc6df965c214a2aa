//! cachet's Service Worker engine, hosted by the app (loaded by `service-worker.js`).
fn main() {
    cachet_worker::sw::install();
}
