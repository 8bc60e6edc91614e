//! Man pages and shell completions generated from a binary's clap
//! definition, so that they can never drift from the real options.
//!
//! Every binary calls [`run`] from a hidden option
//! (`--generate-docs DIR`, or `elicit generate-docs DIR`); packaging runs it
//! on the built binaries and installs what it writes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use clap::Command;
use clap_complete::Shell;

/// What a binary's hidden `--generate-docs DIR` does: [`generate`], then
/// success, or a message naming the directory and failure.
pub fn run(command: Command, dir: &Path) -> std::process::ExitCode {
    let name = command.get_name().to_owned();
    match generate(command, dir) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{name}: cannot write to {}: {error}", dir.display());
            std::process::ExitCode::FAILURE
        }
    }
}

/// Writes into `dir`: `man1/NAME.1` and one `man1/NAME-SUB.1` per visible
/// subcommand (recursively), `bash/NAME`, `zsh/_NAME` and `fish/NAME.fish`.
pub fn generate(mut command: Command, dir: &Path) -> io::Result<()> {
    let name = command.get_name().to_owned();
    let man_dir = dir.join("man1");
    std::fs::create_dir_all(&man_dir)?;
    // Names subcommand pages by their display name ("elicit-ask.1") and
    // leaves out hidden subcommands and `help`.
    clap_mangen::generate_to(command.clone(), &man_dir)?;
    for (shell, file) in [
        (Shell::Bash, format!("bash/{name}")),
        (Shell::Zsh, format!("zsh/_{name}")),
        (Shell::Fish, format!("fish/{name}.fish")),
    ] {
        let path = dir.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut out = BufWriter::new(File::create(&path)?);
        clap_complete::generate(shell, &mut command, &name, &mut out);
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_completions_are_written() {
        let command = Command::new("demo")
            .about("A demo")
            .subcommand(Command::new("run").about("Runs"))
            .subcommand(Command::new("secret").hide(true));
        let dir = std::env::temp_dir().join(format!("elicit-docgen-{}", std::process::id()));
        generate(command, &dir).expect("generate");
        for file in [
            "man1/demo.1",
            "man1/demo-run.1",
            "bash/demo",
            "zsh/_demo",
            "fish/demo.fish",
        ] {
            let text = std::fs::read_to_string(dir.join(file)).expect(file);
            assert!(text.contains("demo"), "{file}: {text}");
        }
        assert!(!dir.join("man1/demo-secret.1").exists());
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
