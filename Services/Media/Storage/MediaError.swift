import MediaImaging
import ServiceKit

/// Everything that can go wrong in media, and the problem each answers with.
public enum MediaError: ProblemConvertible {
    /// Missing, deleted, or of another campus: the caller learns nothing.
    case notFound
    case image(ImageError)
    case invalid(field: String, String)
    /// The caller deleted their account (their access token outlives it by minutes).
    case erased

    public var problem: Problem {
        switch self {
        case .notFound: .notFound("No such image.")
        case .invalid(let field, let detail): .invalid(field, detail)
        case .erased:
            Problem(.forbidden, title: "Account deleted", detail: "This account was deleted: it uploads nothing.")
        case .image(let error):
            switch error {
            case .tooLarge: Problem(.contentTooLarge, detail: error.description)
            case .notAnImage:
                Problem(.unsupportedMediaType, detail: "\(error.description) The type is read from the bytes.")
            case .tooManyPixels, .unreadable: .invalid("body", error.description)
            }
        }
    }
}
