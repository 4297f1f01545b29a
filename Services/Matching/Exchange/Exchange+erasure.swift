import Foundation

/// Erasing a student who deleted their account from the exchange flow, once a suspension's closing has called off
/// their exchanges in progress (their listings active again).
extension ExchangeSteps {
    /// Their active listings are withdrawn as their owner's withdrawal does; then what is kept of them (a finished
    /// exchange, a review given to someone else) no longer names them nor holds what they wrote.
    static func erase(_ userId: UUID, rows: ExchangePostgresRepository) throws {
        for (id, campus) in try rows.activeListings(ownerId: userId) {
            guard let listing = try rows.lockListing(id, campus: campus),
                let withdrawn = try? listing.status.after(.withdraw)
            else { continue }
            try rows.setListingStatus(id, withdrawn)
        }
        try rows.erase(userId)
    }
}
