//! Entry point of the example todo app.
fn main() {
    yew::Renderer::<todo_app::App>::new().render();
}
