import Foundation
import NIOCore

/// What a student does in the app, each step one or more requests through the gateway or a wait on their
/// socket. Every request is recorded by the gateway; a step that fails returns nil.
struct StudentActions: Sendable {
    let gateway: Gateway
    let ledger: Ledger
    let measurements: Measurements

    /// Types the first three to six letters of `name` into the search field, one request per letter, as the app
    /// searches while typing.
    func search(_ student: Student, typing name: String, kind: String) async {
        let letters = Array(name.lowercased())
        guard letters.count >= 3 else { return }
        for length in 3...min(letters.count, Int.random(in: 3...6)) {
            let prefix =
                String(letters.prefix(length)).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            await gateway.call(
                .GET, "/v1/places?q=\(prefix)&kind=\(kind)&limit=10", operation: "GET /v1/places?q= (typing)",
                token: student.token)
            try? await Task.sleep(for: .milliseconds(Int.random(in: 80...250)))
        }
    }

    /// Checks in at `restaurant` heading to `destination`; returns the run's id.
    func checkIn(
        _ deliverer: Student, at restaurant: CampusPlace, to destination: CampusPlace, capacity: Int, minutes: Int
    )
        async -> String?
    {
        let answer = await gateway.call(
            .POST, "/v1/runs", token: deliverer.token,
            body: [
                "id": UUID().uuidString, "restaurantId": restaurant.id, "destinationId": destination.id,
                "capacity": capacity,
                "minutes": minutes,
            ])
        guard let answer, answer.isSuccess else { return nil }
        return answer.json.id("id")
    }

    /// Checks out, trying again (as the app does) while the gateway or the service is away: a run left open would
    /// refuse the deliverer's next check-in.
    func checkOut(_ deliverer: Student, run runId: String) async {
        for attempt in 1...5 {
            let answer = await gateway.call(
                .DELETE, "/v1/runs/\(runId)", operation: "DELETE /v1/runs/{id}", token: deliverer.token, expected: [409]
            )
            if let answer, answer.status < 500 { return }
            try? await Task.sleep(for: .milliseconds(200 * attempt))
        }
    }

    /// Places an order (for `runId` when given) and returns its id; the ledger times it until its first offer.
    func order(_ orderer: Student, from restaurant: CampusPlace, to destination: CampusPlace, run runId: String?) async
        -> String?
    {
        let orderId = UUID().uuidString.lowercased()
        var body: [String: Any] = [
            "id": orderId, "restaurantId": restaurant.id, "destinationId": destination.id,
            "items": "Lounas: kasvissosekeitto ja ruisleipä",
        ]
        if let runId { body["runId"] = runId }
        ledger.placing(order: orderId, at: Stopwatch.now())
        let answer = await gateway.call(
            .POST, "/v1/orders", operation: runId == nil ? "POST /v1/orders" : "POST /v1/orders (runId)",
            token: orderer.token, body: body)
        guard let answer, answer.isSuccess else { return nil }
        return orderId
    }

    /// The next offer on the deliverer's socket, waiting up to `timeout` seconds.
    func nextOffer(_ deliverer: Student, timeout: Double) async -> FeedEvent? {
        await deliverer.mailbox.next(timeout: timeout) { $0.type == "offer.made" }
    }

    /// Accepts the offer; returns the match's id, or nil when it was refused (409: expired or withdrawn).
    func accept(_ deliverer: Student, offer offerId: String) async -> String? {
        let answer = await gateway.call(
            .POST, "/v1/offers/\(offerId)/accept", operation: "POST /v1/offers/{id}/accept", token: deliverer.token)
        guard let answer, answer.isSuccess else { return nil }
        return answer.json.id("id")
    }

    /// A student signs up and deletes the account at once, giving the password again.
    func signUpAndDeleteAccount() async {
        let email = "gone.\(UUID().uuidString.prefix(8).lowercased())@\(Population.campus)"
        let password = "Campus-\(UUID().uuidString.prefix(12))"
        guard
            let answer = await gateway.call(
                .POST, "/v1/auth/signup", body: ["email": email, "password": password, "name": "Gone Student"]),
            let token = answer.json.string("accessToken")
        else { return }
        await gateway.call(.DELETE, "/v1/me", token: token, body: ["password": password])
    }

    func decline(_ deliverer: Student, offer offerId: String) async {
        await gateway.call(
            .POST, "/v1/offers/\(offerId)/decline", operation: "POST /v1/offers/{id}/decline", token: deliverer.token)
    }

    /// Waits for the orderer's `match.accepted` (the match's id) or `order.expired` (nil).
    func waitForMatch(_ orderer: Student, order orderId: String, timeout: Double) async -> String? {
        let event = await orderer.mailbox.next(timeout: timeout) { event in
            switch event.type {
            case "match.accepted": event.data.object("match")?.id("orderId") == orderId
            case "order.expired": event.data.id("orderId") == orderId
            default: false
            }
        }
        guard let event, event.type == "match.accepted" else {
            if event == nil {
                measurements.recordError("order → match.accepted on the orderer's socket", "none in time")
            }
            return nil
        }
        return event.data.object("match")?.id("matchId")
    }

    func cancel(_ orderer: Student, order orderId: String) async {
        await gateway.call(
            .POST, "/v1/orders/\(orderId)/cancel", operation: "POST /v1/orders/{id}/cancel", token: orderer.token,
            expected: [409])
    }

    /// The conversation that `match.accepted` opened and the other member, once `conversation.opened` reached the
    /// student's socket.
    func conversation(_ student: Student, match matchId: String, timeout: Double = 30) async -> (
        id: String, partnerId: String
    )? {
        let event = await student.mailbox.next(timeout: timeout) {
            $0.type == "conversation.opened" && $0.data.id("matchId") == matchId
        }
        let members = (event?.data["memberIds"] as? [String] ?? []).map { $0.lowercased() }
        guard let event, let id = event.data.id("conversationId"),
            let partnerId = members.first(where: { $0 != student.id })
        else {
            measurements.recordError("match.accepted → conversation.opened on the socket", "none in time")
            return nil
        }
        return (id, partnerId)
    }

    /// Sends one message to `recipientId`; the ledger follows it to the recipient's socket from the send that was
    /// taken. A refusal with `Retry-After` is sent again (with the same id) after the time it asks, a few times.
    func send(_ sender: Student, to recipientId: String, in conversationId: String, text: String) async -> Bool {
        let messageId = UUID().uuidString.lowercased()
        for _ in 0..<5 {
            ledger.sending(message: messageId, to: recipientId, at: Stopwatch.now())
            let answer = await gateway.call(
                .POST, "/v1/conversations/\(conversationId)/messages",
                operation: "POST /v1/conversations/{id}/messages",
                token: sender.token, json: ByteBuffer(jsonStrings: ["id": messageId, "text": text]),
                readsAnswer: false)
            if answer?.isSuccess == true { return true }
            ledger.notSent(message: messageId)
            guard let wait = answer?.retryAfter, wait <= 30 else { return false }
            try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
        return false
    }

    /// Sends `count` messages a human pause apart, then waits until as many have come from the other member, so
    /// that completing the match (which closes the chat) cuts no one off.
    func chat(
        _ student: Student, with partnerId: String, in conversationId: String, count: Int, pause: ClosedRange<Double>
    ) async {
        for number in 1...max(1, count) {
            try? await Task.sleep(for: .milliseconds(Int(Double.random(in: pause) * 1000)))
            _ = await send(student, to: partnerId, in: conversationId, text: "Viesti \(number): missä olet? 🙂")
        }
        for _ in 0..<count {
            let received = await student.mailbox.next(timeout: 30) {
                $0.type == "message.sent" && $0.data.id("conversationId") == conversationId
            }
            if received == nil { break }
        }
    }

    func complete(_ student: Student, match matchId: String) async {
        await gateway.call(
            .POST, "/v1/matches/\(matchId)/complete", operation: "POST /v1/matches/{id}/complete", token: student.token)
    }

    func logIn(_ student: Student) async {
        await gateway.call(.POST, "/v1/auth/login", body: ["email": student.email, "password": student.password])
    }
}
