import Testing
import TresorModel

/// The table of interpreters: a name with a version suffix is the interpreter's; a name that
/// only starts like one is not.
struct InterpreterTests {
    @Test(arguments: [
        "/usr/bin/python3.11", "python3", "python", "/usr/bin/perl5.36.0", "perl", "pypy3", "/bin/bash", "/bin/sh", "dash",
        "node18", "lua5.4", "ruby3.1", "/usr/bin/gawk", "busybox", "tclsh8.6", "Rscript",
    ])
    func interpretersAreKnownByName(_ path: String) {
        #expect(Interpreter.isInterpreter(path: path))
    }

    @Test(arguments: [
        "/usr/bin/secret-tool", "git", "git-credential-libsecret", "ssh", "pythonic", "python3-config", "/usr/bin/env", "true",
        "/opt/app/shell-helper",
    ])
    func otherProgramsAreNot(_ path: String) {
        #expect(!Interpreter.isInterpreter(path: path))
    }
}
