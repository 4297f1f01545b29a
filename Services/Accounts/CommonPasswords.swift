/// The most common passwords of public breach lists, refused at sign-up. Compared case-insensitively.
enum CommonPasswords {
    static func contains(_ password: String) -> Bool {
        list.contains(password.lowercased())
    }

    private static let list: Set<String> = [
        "password", "password1", "password12", "password123", "password1234", "passw0rd", "p@ssw0rd", "p@ssword",
        "12345678", "123456789", "1234567890", "12345678910", "87654321", "11111111", "00000000", "88888888",
        "99999999", "12341234", "11223344", "123123123", "1q2w3e4r", "1q2w3e4r5t", "1qaz2wsx", "zaq12wsx",
        "qwertyui", "qwertyuiop", "qwerty123", "qwerty12", "asdfghjk", "asdfghjkl", "zxcvbnm1", "azertyui",
        "iloveyou", "iloveyou1", "sunshine", "princess", "football", "baseball", "basketball", "superman",
        "batman12", "starwars", "trustno1", "whatever", "welcome1", "welcome123", "letmein1", "changeme",
        "computer", "internet", "dragon12", "monkey12", "master12", "michelle", "jennifer", "jordan23",
        "abcd1234", "abc12345", "abcdefgh", "a1b2c3d4", "aa123456", "qwe12345", "passpass", "testtest",
        "test1234", "admin123", "administrator", "secret12", "mustang1", "shadow12", "charlie1", "freedom1",
        "pokemon1", "liverpool", "chelsea1", "arsenal1", "minecraft", "fortnite", "helsinki", "helsinki1",
        "salasana", "salasana1", "salasana123", "qwertyqwerty", "1234qwer", "q1w2e3r4", "q1w2e3r4t5",
        "hello123", "loveyou1", "lovely12", "babygirl", "iloveu12", "student1", "university", "tarrare1",
    ]
}
