//! cachet's yew-agent worker, hosted by the app (started by `<CachetProvider>`).
use yew_agent::Registrable;

fn main() {
    cachet_worker::agent::CachetAgent::registrar().register();
}
