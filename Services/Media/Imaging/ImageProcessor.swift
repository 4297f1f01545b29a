import CVips
import Foundation

/// An image format media accepts, recognised by its first bytes, never by a name or a header.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp

    public var contentType: String { "image/\(rawValue)" }

    /// The format whose signature `data` begins with, or nil.
    public static func sniff(_ data: Data) -> ImageFormat? {
        let head = [UInt8](data.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) {
            return .webp
        }
        return nil
    }

    /// libvips's saver and its options: metadata (EXIF with its GPS position, XMP, comments) stripped.
    var saveSuffix: String {
        switch self {
        case .jpeg: ".jpg[Q=85,strip]"
        case .png: ".png[strip]"
        case .webp: ".webp[Q=85,strip]"
        }
    }
}

/// How large an upload may be.
public struct ImageLimits: Sendable {
    public var maxBytes = 8 * 1024 * 1024
    public var maxPixels = 40_000_000

    public init() {}
}

/// Why an upload is not an image media keeps.
public enum ImageError: Error, Equatable, CustomStringConvertible {
    case tooLarge(bytes: Int, limit: Int)
    case notAnImage
    case tooManyPixels(width: Int, height: Int, limit: Int)
    case unreadable(String)

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "The image has \(bytes) bytes; at most \(limit) are accepted."
        case .notAnImage: "The body is not a JPEG, PNG or WebP image."
        case .tooManyPixels(let width, let height, let limit):
            "The image is \(width) × \(height) pixels; at most \(limit / 1_000_000) megapixels are accepted."
        case .unreadable(let reason): "The image cannot be read: \(reason)"
        }
    }
}

/// An upload made safe to serve: upright, without metadata, with a small and a large variant.
public struct ProcessedImage: Sendable {
    public var format: ImageFormat
    public var width: Int
    public var height: Int
    public var original: Data
    public var large: Data
    public var small: Data
}

/// Reads, checks and re-encodes images with libvips. The only file that touches libvips's pointers.
public enum ImageProcessor {
    public static let smallWidth = 320
    public static let largeWidth = 1280

    private static let isStarted = tarrare_vips_start() == 0

    /// Checks the size, the format (from the bytes) and the pixel count (from the header, before any pixel is
    /// decoded), then writes the upright image and its variants without metadata.
    public static func process(_ data: Data, limits: ImageLimits = ImageLimits()) throws -> ProcessedImage {
        guard data.count <= limits.maxBytes else {
            throw ImageError.tooLarge(bytes: data.count, limit: limits.maxBytes)
        }
        guard let format = ImageFormat.sniff(data) else { throw ImageError.notAnImage }
        guard isStarted else { throw ImageError.unreadable("the image library did not start") }
        return try data.withUnsafeBytes { bytes in
            // The image reads from `bytes` lazily, so everything happens inside this closure.
            guard let loaded = tarrare_vips_load(bytes.baseAddress, bytes.count) else { throw lastError() }
            defer { tarrare_vips_release(loaded) }
            let (width, height) = (Int(vips_image_get_width(loaded)), Int(vips_image_get_height(loaded)))
            guard width * height <= limits.maxPixels else {
                throw ImageError.tooManyPixels(width: width, height: height, limit: limits.maxPixels)
            }
            var upright: UnsafeMutablePointer<VipsImage>?
            guard tarrare_vips_autorotate(loaded, &upright) == 0, let upright else { throw lastError() }
            defer { tarrare_vips_release(upright) }
            return ProcessedImage(
                format: format, width: Int(vips_image_get_width(upright)), height: Int(vips_image_get_height(upright)),
                original: try save(upright, format), large: try save(upright, format, width: largeWidth),
                small: try save(upright, format, width: smallWidth))
        }
    }

    /// The image (shrunk to `width` when it is wider) encoded in `format`.
    private static func save(_ image: UnsafeMutablePointer<VipsImage>, _ format: ImageFormat, width: Int? = nil) throws
        -> Data
    {
        var source = image
        var shrunk: UnsafeMutablePointer<VipsImage>?
        defer { tarrare_vips_release(shrunk) }
        if let width {
            guard tarrare_vips_shrink_to_width(image, &shrunk, Int32(width)) == 0, let shrunk else { throw lastError() }
            source = shrunk
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard tarrare_vips_save(source, format.saveSuffix, &buffer, &length) == 0, let buffer else { throw lastError() }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// A stand-in for a phone photo (colour grain, as a JPEG of quality 90), for the benchmark: the stronger the
    /// grain, the larger the file.
    public static func grainPhoto(width: Int, height: Int, grain: Double) throws -> Data {
        guard isStarted else { throw ImageError.unreadable("the image library did not start") }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard tarrare_vips_grain_jpeg(Int32(width), Int32(height), grain, &buffer, &length) == 0, let buffer else {
            throw lastError()
        }
        defer { g_free(buffer) }
        return Data(bytes: buffer, count: length)
    }

    /// libvips's last error, then cleared.
    private static func lastError() -> ImageError {
        let message = String(cString: vips_error_buffer()).split(separator: "\n").first.map(String.init)
        vips_error_clear()
        return .unreadable(message ?? "unknown error")
    }
}
