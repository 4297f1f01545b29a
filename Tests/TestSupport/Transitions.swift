import Testing

/// Checks every pair of a state machine: each allowed pair gives its expected state, and every other is refused.
public func expectTransitions<State: CaseIterable & Equatable, Action: CaseIterable & Equatable>(
    _ allowed: [(State, Action, State)], after: (State, Action) throws -> State,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    for state in State.allCases {
        for action in Action.allCases {
            let expected = allowed.first { $0.0 == state && $0.1 == action }?.2
            do {
                let next = try after(state, action)
                #expect(next == expected, "\(state) after \(action)", sourceLocation: sourceLocation)
            } catch {
                #expect(expected == nil, "\(state) after \(action) was refused", sourceLocation: sourceLocation)
            }
        }
    }
}
