import Contracts
import Foundation

/// Someone agreed to a snack listing: its owner is told, and chat opens their conversation from `match.opened`.
public struct ExchangeAgreed: Event, Equatable {
    public static let type = "exchange.agreed"
    public var exchangeId: UUID
    public var listingId: UUID
    public var campus: String
    /// What the listing offers.
    public var offered: String
    public var takerId: UUID
    public var takerName: String
    /// What the taker brings in return, when they said.
    public var offering: String?
    public var recipients: [UUID]
    public var version: Int64
    public var notice: Notice?
    public var aggregateId: UUID { exchangeId }

    public init(
        exchangeId: UUID, listingId: UUID, campus: String, offered: String, ownerId: UUID, takerId: UUID,
        takerName: String, offering: String?, version: Int64
    ) {
        self.exchangeId = exchangeId
        self.listingId = listingId
        self.campus = campus
        self.offered = offered
        self.takerId = takerId
        self.takerName = takerName
        self.offering = offering
        self.recipients = [ownerId]
        self.version = version
        notice = Notice(
            title: "\(Notice.firstName(takerName)) wants your \(offered)",
            body: offering.map { "They bring \($0) in return." } ?? "Agree on the swap in the chat.")
    }
}

/// One side called an exchange off: the other is told, the listing is active again and the chat closes.
public struct ExchangeCancelled: Event, Equatable {
    public static let type = "exchange.cancelled"
    public var exchangeId: UUID
    public var listingId: UUID
    public var cancelledBy: UUID
    public var recipients: [UUID]
    public var version: Int64
    public var aggregateId: UUID { exchangeId }

    public init(exchangeId: UUID, listingId: UUID, cancelledBy: UUID, otherPartyId: UUID, version: Int64) {
        self.exchangeId = exchangeId
        self.listingId = listingId
        self.cancelledBy = cancelledBy
        self.recipients = [otherPartyId]
        self.version = version
    }
}

/// Both sides marked an exchange done: the listing is exchanged, each may now review the other.
public struct ExchangeCompleted: Event, Equatable {
    public static let type = "exchange.completed"
    public var exchangeId: UUID
    public var listingId: UUID
    public var recipients: [UUID]
    public var version: Int64
    public var aggregateId: UUID { exchangeId }

    public init(exchangeId: UUID, listingId: UUID, partyIds: [UUID], version: Int64) {
        self.exchangeId = exchangeId
        self.listingId = listingId
        self.recipients = partyIds
        self.version = version
    }
}

/// A student asked about a listing: its owner is told, and chat opens their conversation from `match.opened`.
public struct QuestionAsked: Event, Equatable {
    public static let type = "exchange.question.asked"
    public var questionId: UUID
    public var listingId: UUID
    /// What the listing offers.
    public var offered: String
    public var askerId: UUID
    public var askerName: String
    public var recipients: [UUID]
    /// A question is never revised: always 1.
    public var version: Int64
    public var notice: Notice?
    public var aggregateId: UUID { questionId }

    public init(questionId: UUID, listingId: UUID, offered: String, ownerId: UUID, askerId: UUID, askerName: String) {
        self.questionId = questionId
        self.listingId = listingId
        self.offered = offered
        self.askerId = askerId
        self.askerName = askerName
        recipients = [ownerId]
        version = 1
        notice = Notice(
            title: "\(Notice.firstName(askerName)) asks about your \(offered)", body: "Answer them in the chat.")
    }
}
