import Foundation

/// Converts between `Date` and PostgreSQL's ISO text form of `timestamptz`, to the microsecond.
enum PostgresTimestamp {
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var days = micros / 86_400_000_000
        var remainder = micros % 86_400_000_000
        if remainder < 0 {
            remainder += 86_400_000_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let seconds = remainder / 1_000_000
        let fraction = remainder % 1_000_000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):"
            + "\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(fraction, 6))Z"
    }

    /// Parses `2026-11-22 03:05:16.123456+00` (DateStyle ISO); also accepts a `T` separator and `Z`.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + width] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += width
            return value
        }
        func skip(_ byte: UInt8...) -> Bool {
            guard index < bytes.count, byte.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip(45), let month = number(2), skip(45), let day = number(2),
            skip(32, 84), let hour = number(2), skip(58), let minute = number(2), skip(58),
            let second = number(2)
        else { return nil }
        var micros: Int64 = 0
        if skip(46) {
            var scale: Int64 = 100_000
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                micros += Int64(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        var offsetSeconds: Int64 = 0
        if skip(90) {
            offsetSeconds = 0
        } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
            let sign: Int64 = bytes[index] == 45 ? -1 : 1
            index += 1
            guard let offsetHours = number(2) else { return nil }
            var offsetMinutes: Int64 = 0
            if skip(58) { offsetMinutes = number(2) ?? 0 }
            if skip(58) { _ = number(2) }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let total = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(total) + Double(micros) / 1_000_000)
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
