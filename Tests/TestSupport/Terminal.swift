import Foundation

/// A program run on a pseudo-terminal of its own — its standard input, output and error, and its
/// session's controlling terminal, the program in the foreground — with prompts answered as a
/// user types: what a test needs for a program that asks only a terminal (`age`'s passphrase,
/// `tresor`'s passcode with echo off, a yes/no question). One driver, in Python (`pty.fork`),
/// told what to do on its standard input, so that no answer ever reaches a command line.
public enum Terminal {
    /// What the terminal showed, and how the program ended (negative: killed by that signal).
    public struct Screen: Sendable {
        public var text: String
        public var status: Int32
    }

    /// A prompt answered each time it ends the screen: the text shown since the last answer ends
    /// with one of `endings`, its last line holds `containing` (any case), and the whole of it
    /// holds `showing`.
    public struct Prompt: Encodable, Sendable {
        public var endings: [String]
        public var containing: String
        public var showing: String
        public var send: String

        public init(endingWith endings: String..., containing: String = "", showing: String = "", send: String) {
            (self.endings, self.containing, self.showing, self.send) = (endings, containing, showing, send)
        }
    }

    public static let python = URL(fileURLWithPath: "/usr/bin/python3")

    /// The arguments that run the driver with `python3`; the driver reads ``request(_:answers:prompts:input:directory:environment:timeout:)``
    /// on its standard input and prints the screen as JSON (``screen(_:)`` reads it).
    public static let driverArguments = ["-c", driver]

    /// What the driver is to run.
    /// - Parameters:
    ///   - argv: the program (a full path) and its arguments.
    ///   - answers: typed in order, each once the screen shows `expect` after the previous answer.
    ///   - prompts: answered whenever they end the screen (after `answers` are all typed).
    ///   - input: the program's standard input instead of the terminal (the terminal stays its
    ///     controlling one).
    ///   - directory: its working directory.
    ///   - environment: its whole environment (by default the driver's).
    ///   - timeout: seconds after which the program is killed.
    /// - Returns: the driver's standard input.
    /// - Throws: when the request cannot be encoded.
    public static func request(
        _ argv: [String], answers: [(expect: String, send: String)] = [], prompts: [Prompt] = [], input: String? = nil,
        directory: String? = nil, environment: [String: String]? = nil, timeout: TimeInterval = 60
    ) throws -> String {
        struct Request: Encodable {
            var argv: [String]
            var answers: [[String]]
            var prompts: [Prompt]
            var input: String?
            var cwd: String?
            var env: [String: String]?
            var timeout: Double
        }
        let request = Request(
            argv: argv, answers: answers.map { [$0.expect, $0.send] }, prompts: prompts, input: input,
            cwd: directory, env: environment, timeout: timeout)
        return String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
    }

    /// The screen the driver printed on `result`'s standard output.
    /// - Throws: ``TestProcess/Failure`` with the driver's errors when it printed none.
    public static func screen(_ result: TestProcess.Result) throws -> Screen {
        struct Printed: Decodable { var screen: String; var status: Int32 }
        guard let printed = try? JSONDecoder().decode(Printed.self, from: Data(result.stdout.utf8)) else {
            throw TestProcess.Failure("the terminal driver printed no screen (status \(result.status)): \(result.stderr.suffix(2000))")
        }
        return Screen(text: printed.screen, status: printed.status)
    }

    /// Runs `argv` on a terminal of its own from this process, as ``request(_:answers:prompts:input:directory:environment:timeout:)`` describes.
    /// - Returns: what the terminal showed.
    /// - Throws: when the driver does not start or prints no screen.
    public static func run(
        _ argv: [String], answers: [(expect: String, send: String)] = [], prompts: [Prompt] = [], input: String? = nil,
        directory: String? = nil, environment: [String: String]? = nil, timeout: TimeInterval = 60
    ) throws -> Screen {
        let request = try request(
            argv, answers: answers, prompts: prompts, input: input, directory: directory, environment: environment, timeout: timeout)
        return try screen(try TestProcess.run(python, driverArguments, input: request, timeout: timeout + 10).result)
    }

    private static let driver = #"""
        import json, os, pty, select, signal, sys, time
        spec = json.loads(sys.stdin.read())
        pid, fd = pty.fork()
        if pid == 0:
            if spec.get("cwd"):
                os.chdir(spec["cwd"])
            if spec.get("input") is not None:
                r, w = os.pipe()
                os.write(w, spec["input"].encode()); os.close(w)
                os.dup2(r, 0)
            if spec.get("env") is None:
                os.execv(spec["argv"][0], spec["argv"])
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        answers, prompts = list(spec["answers"]), spec["prompts"]
        screen, answered = b"", 0
        deadline = time.time() + spec["timeout"]
        def answer(text):
            global answered
            answered = len(screen)
            time.sleep(0.3)  # the prompt's echo change flushes what was typed before it
            os.write(fd, text.encode() + b"\n")
        while time.time() < deadline:
            if not select.select([fd], [], [], max(0, deadline - time.time()))[0]:
                break
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
            since = screen[answered:].decode(errors="replace")
            if answers:
                if answers[0][0] in since:
                    answer(answers.pop(0)[1])
                continue
            tail = since.rstrip()
            line = tail.split("\n")[-1].lower()
            for prompt in prompts:
                if (any(tail.endswith(ending) for ending in prompt["endings"]) and prompt["containing"].lower() in line
                        and prompt["showing"] in since):
                    answer(prompt["send"])
                    break
        if time.time() >= deadline:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"screen": screen.decode(errors="replace"), "status": os.waitstatus_to_exitcode(status)}))
        """#
}
