import Foundation

extension UUID {
    /// A version 7 UUID (RFC 9562): the first 48 bits are the Unix time in milliseconds, the rest random. Event ids
    /// are these, so that the unique indexes that hold them (the outbox's, every consumer's inbox) take each new one
    /// next to the last rather than on a random page of an index that grows with every message: a random id costs
    /// the inbox a page read and, after each checkpoint, a full-page image in the WAL per insert.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        // NB: the random bits from the system's generator (getrandom): Foundation's `UUID()` opened, read and closed
        // /dev/urandom for each one, three system calls on every chat message.
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        // 48 bits of time, the version (7), 12 random bits; the variant (binary 10), 62 random bits.
        let first = milliseconds << 16 | 0x7000 | (high & 0x0FFF)
        let second = 0x8000_0000_0000_0000 | (low & 0x3FFF_FFFF_FFFF_FFFF)
        func byte(_ value: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(first, 0), byte(first, 1), byte(first, 2), byte(first, 3), byte(first, 4), byte(first, 5),
                byte(first, 6), byte(first, 7), byte(second, 0), byte(second, 1), byte(second, 2), byte(second, 3),
                byte(second, 4), byte(second, 5), byte(second, 6), byte(second, 7)
            ))
    }
}
