//! The start module of the bench's worker ([`bench-sw`](../bench-sw.rs)): its fetch path alone
//! (`cachet_worker::sw::install_start`), which the shim loads as a stopped worker starts.

fn main() {
    cachet_worker::sw::install_start();
}

#[global_allocator]
static ALLOCATOR: cachet_worker::Allocator = cachet_worker::allocator();
