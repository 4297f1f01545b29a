import Foundation

/// Matching's tables that every flow shares: the read models of places, users and media, and the timers. Each flow's
/// own tables come from its own folder of migrations, applied after this one.
public enum MatchingMigrations {
    public static let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
}
