internal import CompressNIO
import Foundation
internal import NIOCore

/// gunzip with a bound on the output, for bodies from a hostile file.
///
/// Inflates through CompressNIO's zlib wrapper one 64 KiB window at a time, so a zip bomb
/// stops as soon as its output passes the bound (memory stays near the bound). Unlike
/// CompressNIO's convenience loops, a stream that ends early (truncated) or is followed by more
/// bytes is an error rather than a silently shorter result.
enum BoundedGunzip {
    static let windowByteCount = 64 * 1024

    /// The decompressed bytes of one gzip member that is exactly `data`.
    static func decompress(_ data: Data, maxOutputBytes: Int) throws(AppleNotesError) -> [UInt8] {
        guard !data.isEmpty else { throw .damagedBody("empty data") }
        guard data.count >= 2, data[data.startIndex] == 0x1F, data[data.startIndex + 1] == 0x8B else {
            throw .damagedBody("not gzip data (no gzip header)")
        }
        let decompressor: ZlibDecompressor
        do {
            decompressor = try ZlibDecompressor(algorithm: .gzip, windowSize: 15)
        } catch {
            throw .damagedBody("zlib could not start (\(error))")
        }
        let allocator = ByteBufferAllocator()
        var input = allocator.buffer(bytes: data)
        var window = allocator.buffer(capacity: windowByteCount)
        var output: [UInt8] = []

        while true {
            window.clear()
            let ended = try inflate(decompressor, from: &input, to: &window)
            guard output.count + window.readableBytes <= maxOutputBytes else {
                throw .tooLarge("the note body inflates to more than \(maxOutputBytes) bytes")
            }
            output.append(contentsOf: window.readableBytesView)
            guard ended else { continue }
            if input.readableBytes > 0 {
                throw .damagedBody("\(input.readableBytes) bytes follow the end of the gzip data")
            }
            // All input is consumed and zlib stopped. That is either the end of the stream or a
            // truncated one waiting for more: ask again with no input. A finished stream says
            // "stream end" again; an unfinished one cannot progress (input buffer overflow).
            var nothing = allocator.buffer(capacity: 16)
            window.clear()
            _ = try inflate(decompressor, from: &nothing, to: &window)
            guard window.readableBytes == 0 else { throw .damagedBody("gzip data continued without input") }
            return output
        }
    }

    /// One inflate call. Returns true when zlib stopped without filling the window (stream end,
    /// or every input byte consumed); false when the window is full and there is more to come.
    private static func inflate(
        _ decompressor: ZlibDecompressor, from input: inout ByteBuffer, to window: inout ByteBuffer
    ) throws(AppleNotesError) -> Bool {
        do {
            try decompressor.inflate(from: &input, to: &window)
            return true
        } catch let error as CompressNIOError where error == .bufferOverflow {
            // A full window is progress; an empty one would loop forever.
            guard window.readableBytes > 0 else { throw .damagedBody("gzip data makes no progress") }
            return false
        } catch let error as CompressNIOError where error == .inputBufferOverflow {
            throw .damagedBody("truncated gzip data")
        } catch let error as CompressNIOError where error == .corruptData {
            throw .damagedBody("corrupt gzip data")
        } catch {
            throw .damagedBody("gzip data could not be inflated (\(error))")
        }
    }
}
