//! The `elicit-notify` binary; the program is [`elicit_notify::program::main`].

fn main() -> std::process::ExitCode {
    elicit_notify::program::main()
}
