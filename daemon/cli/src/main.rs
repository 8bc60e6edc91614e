//! The `elicit` binary; the command is [`elicit_cli::main`].

fn main() -> std::process::ExitCode {
    elicit_cli::main()
}
