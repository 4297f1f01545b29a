import Foundation
import MediaImaging
import Testing

/// libvips on real files: a phone photo with its GPS position, the other formats, and each kind of bad upload.
@Suite struct ImageProcessorTests {
    static func fixture(_ name: String) throws -> Data {
        try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "Fixtures/\(name)"))
    }

    /// Whether `data` holds `text` anywhere.
    func contains(_ data: Data, _ text: String) -> Bool {
        data.range(of: Data(text.utf8)) != nil
    }

    @Test func aPhonePhotoComesBackWithoutItsExifAndWithVariantsOfThePromisedWidths() throws {
        let photo = try Self.fixture("phone-photo.jpg")
        #expect(contains(photo, "Exif") && contains(photo, "Tarrare Test Phone"))

        let image = try ImageProcessor.process(photo)

        #expect(image.format == .jpeg && image.width == 1600 && image.height == 1200)
        for variant in [image.original, image.large, image.small] {
            #expect(ImageFormat.sniff(variant) == .jpeg)
            #expect(!contains(variant, "Exif") && !contains(variant, "Tarrare Test Phone"))
        }
        #expect(try ImageProcessor.process(image.large).width == ImageProcessor.largeWidth)
        #expect(try ImageProcessor.process(image.small).width == ImageProcessor.smallWidth)
        #expect(try ImageProcessor.process(image.small).height == 240)
    }

    @Test func pngAndWebPKeepTheirFormatAndASmallImageIsNeverEnlarged() throws {
        let badge = try ImageProcessor.process(try Self.fixture("badge.png"))
        let snack = try ImageProcessor.process(try Self.fixture("snack.webp"))

        #expect(badge.format == .png && badge.format.contentType == "image/png")
        #expect(try ImageProcessor.process(badge.large).width == 400)
        #expect(try ImageProcessor.process(badge.small).width == 320)
        #expect(snack.format == .webp && ImageFormat.sniff(snack.small) == .webp)
    }

    @Test func eachKindOfBadUploadIsRefusedWithItsReason() throws {
        let photo = try Self.fixture("phone-photo.jpg")

        #expect(throws: ImageError.notAnImage) { try ImageProcessor.process(Data("just some text, named .jpg".utf8)) }
        #expect(throws: ImageError.tooLarge(bytes: 9 * 1024 * 1024, limit: 8 * 1024 * 1024)) {
            try ImageProcessor.process(photo + Data(count: 9 * 1024 * 1024 - photo.count))
        }
        #expect(throws: ImageError.tooManyPixels(width: 20_000, height: 20_000, limit: 40_000_000)) {
            try ImageProcessor.process(try Self.fixture("bomb.png"))
        }
        let truncated = photo.prefix(photo.count * 6 / 10)
        #expect {
            try ImageProcessor.process(Data(truncated))
        } throws: { error in
            if case ImageError.unreadable = error { true } else { false }
        }
    }
}
