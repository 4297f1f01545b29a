import CCrypt
import Foundation
import NIOPosix

/// bcrypt through the system's libcrypt, on threads of its own so that the deliberately slow hashing never
/// blocks the event loop or the Swift concurrency pool.
struct PasswordHasher: Sendable {
    let cost: Int
    private let threads: NIOThreadPool
    /// A real hash of a random password, checked when an email is unknown so that login takes the same time.
    private let decoy: String

    init(cost: Int, threads: NIOThreadPool) throws {
        precondition((4...31).contains(cost), "bcrypt cost must be 4 to 31")
        self.cost = cost
        self.threads = threads
        decoy = try Self.hash(UUID().uuidString, cost: cost)
    }

    func hash(_ password: String) async throws -> String {
        let cost = cost
        return try await threads.runIfActive { try Self.hash(password, cost: cost) }
    }

    /// Checks `password` against `hash`, or against the decoy when there is no account, taking the same time.
    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let target = hash ?? decoy
        let matches = try await threads.runIfActive { try Self.hash(password, setting: target) == target }
        return matches && hash != nil
    }

    private static func hash(_ password: String, cost: Int) throws -> String {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        guard crypt_gensalt_rn("$2b$", UInt(cost), nil, 0, &salt, Int32(salt.count)) != nil else {
            throw PasswordHasherError.saltFailed
        }
        return try hash(password, setting: String(cString: salt))
    }

    private static func hash(_ password: String, setting: String) throws -> String {
        var output = [CChar](repeating: 0, count: Int(CRYPT_OUTPUT_SIZE))
        guard tarrare_crypt(password, setting, &output, Int32(output.count)) == 0 else {
            throw PasswordHasherError.hashFailed
        }
        return String(cString: output)
    }
}

enum PasswordHasherError: Error {
    case saltFailed
    case hashFailed
}
