#if canImport(Security)
    import Foundation
    import Security

    /// Tokens in the Keychain of an Apple device, readable after its first unlock (so that a refresh in the background
    /// works) and never copied to another device.
    public struct KeychainTokenStore: TokenStore {
        public let service: String
        public let account: String

        public init(service: String = "tarrare", account: String = "session") {
            self.service = service
            self.account = account
        }

        private var query: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
        }

        public func load() throws -> Tokens? {
            var search = query
            search[kSecReturnData as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(search as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
            return try JSONDecoder().decode(Tokens.self, from: data)
        }

        public func save(_ tokens: Tokens?) throws {
            let deleted = SecItemDelete(query as CFDictionary)
            guard deleted == errSecSuccess || deleted == errSecItemNotFound else {
                throw KeychainError(status: deleted)
            }
            guard let tokens else { return }
            var item = query
            item[kSecValueData as String] = try JSONEncoder().encode(tokens)
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let added = SecItemAdd(item as CFDictionary, nil)
            guard added == errSecSuccess else { throw KeychainError(status: added) }
        }
    }

    /// A Keychain call that failed, with its status (`SecCopyErrorMessageString` tells it in words).
    public struct KeychainError: Error, Sendable {
        public var status: OSStatus
    }
#endif
