import CLibPQ
import Foundation

/// LISTEN's side of a connection: the NOTIFY messages it receives.
extension PostgresConnection {
    /// Waits up to `timeout` seconds for NOTIFY messages on channels this connection LISTENs to, or until
    /// `descriptor` (another file the caller waits on) is readable.
    public func waitForNotifications(timeout: Double, orReadable descriptor: Int32? = nil) throws
        -> [PostgresNotification]
    {
        var notifications = drainNotifications()
        if !notifications.isEmpty { return notifications }
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw PostgresError(sqlState: nil, message: "connection has no socket") }
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
        if let descriptor { descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(timeout * 1000))
        if ready < 0 && errno != EINTR {
            throw PostgresError(sqlState: nil, message: "poll failed: \(String(cString: strerror(errno)))")
        }
        guard PQconsumeInput(connection) == 1 else {
            throw PostgresError(sqlState: "08006", message: String(cString: PQerrorMessage(connection)))
        }
        notifications = drainNotifications()
        return notifications
    }

    private func drainNotifications() -> [PostgresNotification] {
        var notifications: [PostgresNotification] = []
        while let notify = PQnotifies(connection) {
            notifications.append(
                PostgresNotification(
                    channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra)))
            PQfreemem(notify)
        }
        return notifications
    }
}

/// A NOTIFY received on a LISTENing connection.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String

    public init(channel: String, payload: String) {
        self.channel = channel
        self.payload = payload
    }
}
