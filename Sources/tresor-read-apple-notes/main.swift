// tresor-read-apple-notes PATH
//
// Reads an Apple Notes database (NoteStore.sqlite) and writes its notes as JSON
// (`AppleNotesReading`, the API's date and data encodings) on standard output, for
// `tresor import apple-notes`. The file is hostile input: it is parsed here, in a process that
// holds no key and no connection to the daemon, and is never written to. A file that cannot be
// read is reported on standard error with exit status 1; a wrong invocation exits with 2.
import Foundation
import TresorAppleNotes
import TresorProtocol

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
    FileHandle.standardError.write(Data("usage: tresor-read-apple-notes PATH  (run by `tresor import apple-notes PATH`)\n".utf8))
    exit(2)
}
do {
    let library = try AppleNoteStore.read(at: URL(fileURLWithPath: path))
    FileHandle.standardOutput.write(try APICoding.encoder.encode(library.importReading))
} catch let error as AppleNotesError {
    FileHandle.standardError.write(Data(error.description.utf8))
    exit(1)
} catch {
    FileHandle.standardError.write(Data("cannot read \(path): \(error)".utf8))
    exit(1)
}
