extension String {
    /// Whether this frame of `/v1/stream` is its `stream.live`, which says the replay is done.
    public var isLiveFrame: Bool { hasPrefix(#"{"type":"stream.live""#) }
}
