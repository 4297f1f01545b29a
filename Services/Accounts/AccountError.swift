import ServiceKit

/// Everything that can go wrong in accounts, and the problem each answers with.
enum AccountError: ProblemConvertible {
    case invalid(field: String, String)
    case unknownCampus(domain: String)
    case emailTaken
    case invalidCredentials
    /// The password given again to confirm a deletion is not the account's.
    case wrongPassword
    case emailNotVerified
    case invalidVerificationCode
    case invalidRefreshToken
    case throttled(String, retryAfterSeconds: Int)
    /// A photo id that is not one of the caller's images in media.
    case notYourImage
    /// Missing, or of another campus: the same answer.
    case notFound(String)
    /// Only the campus's moderators may.
    case notModerator
    /// The caller's account was deleted or suspended after their access token was issued.
    case inactive
    /// A moderator suspended the account, for `reason`.
    case suspended(reason: String)

    var problem: Problem {
        switch self {
        case .invalid(let field, let detail):
            .invalid(field, detail)
        case .unknownCampus(let domain):
            Problem(
                .badRequest, title: "Unknown campus",
                detail: "\(domain) is not the email domain of a campus Tarrare serves; see GET /v1/campuses.",
                field: "email", type: "/problems/unknown-campus")
        case .emailTaken:
            Problem(
                .conflict, title: "Email taken", detail: "An account with this email already exists.", field: "email")
        case .invalidCredentials:
            Problem(.unauthorized, title: "Invalid credentials", detail: "The email or the password is wrong.")
        case .wrongPassword:
            Problem(
                .unauthorized, title: "Wrong password", detail: "The password is wrong; nothing was deleted.",
                field: "password")
        case .emailNotVerified:
            Problem(
                .forbidden, title: "Email not verified",
                detail: "Confirm your email with the code we sent before logging in.",
                type: "/problems/email-not-verified")
        case .invalidVerificationCode:
            Problem(.badRequest, title: "Invalid code", detail: "The code is wrong or has expired.", field: "code")
        case .invalidRefreshToken:
            Problem(.unauthorized, title: "Invalid refresh token", detail: "Log in again.")
        case .notModerator:
            Problem(.forbidden, title: "Moderators only", detail: "Only the campus's moderators may do this.")
        case .inactive:
            Problem(
                .forbidden, title: "Account not active", detail: "Your account is suspended or deleted.",
                type: "/problems/account-inactive")
        case .suspended(let reason):
            Problem(
                .forbidden, title: "Account suspended",
                detail: "A moderator of your campus suspended your account: \(reason)", type: "/problems/suspended")
        case .notFound(let what):
            .notFound("No such \(what) on your campus.")
        case .notYourImage:
            Problem(
                .notFound, detail: "No image of yours has this id; upload the photo with POST /v1/media first.",
                field: "photoId")
        case .throttled(let detail, let seconds):
            Problem(
                .tooManyRequests, detail: "\(detail) Try again in \(seconds) seconds.",
                headers: [.retryAfter: String(seconds)])
        }
    }
}
