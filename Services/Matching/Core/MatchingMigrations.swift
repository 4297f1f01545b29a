import Foundation

/// Matching's tables that every flow shares (and, from before flows had folders, the delivery flow's first tables);
/// a flow with tables of its own adds its own folder of migrations after this one, with names of its own.
public enum MatchingMigrations {
    public static let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
}
