//! The `elicit-tui` binary; the program is [`elicit_tui::program::main`].

fn main() -> std::process::ExitCode {
    elicit_tui::program::main()
}
