import Foundation

extension UUID {
    /// A version 7 UUID (RFC 9562): the first 48 bits are the Unix time in milliseconds, the rest random. Event ids
    /// are these, so that the unique indexes that hold them (the outbox's, every consumer's inbox) take each new one
    /// next to the last rather than on a random page of an index that grows with every message: a random id costs
    /// the inbox a page read and, after each checkpoint, a full-page image in the WAL per insert.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = UUID().uuid
        bytes.0 = UInt8(truncatingIfNeeded: milliseconds >> 40)
        bytes.1 = UInt8(truncatingIfNeeded: milliseconds >> 32)
        bytes.2 = UInt8(truncatingIfNeeded: milliseconds >> 24)
        bytes.3 = UInt8(truncatingIfNeeded: milliseconds >> 16)
        bytes.4 = UInt8(truncatingIfNeeded: milliseconds >> 8)
        bytes.5 = UInt8(truncatingIfNeeded: milliseconds)
        // NB: `UUID()` is version 4 with the RFC's variant already; only the version nibble changes.
        bytes.6 = 0x70 | (bytes.6 & 0x0F)
        return UUID(uuid: bytes)
    }
}
