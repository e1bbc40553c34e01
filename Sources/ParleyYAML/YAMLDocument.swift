import Yams

/// Parses YAML text into located nodes, with Yams (which builds its own
/// libyaml, so no system library is needed).
public enum YAMLDocument {
    /// How scalars are typed. `.asWritten` keeps every scalar's text as
    /// written (no YAML 1.1 typing, so "07:30" stays text, and composing
    /// skips Yams's regular expressions); `.yaml11` is Yams's default.
    public enum Scalars: Sendable { case asWritten, yaml11 }

    /// The root node, or nil for an empty document; a syntax error is a
    /// `YAMLError` at the place libyaml stopped. Text past `limits`, and any
    /// anchor or alias, is refused (`.refused`) at its place before it is
    /// composed.
    public static func parse(
        _ text: String, file: String, scalars: Scalars = .yaml11, limits: YAMLLimits
    ) throws(YAMLError) -> YAMLNode? {
        if let error = sizeError(bytes: text.utf8.count, file: file, limits: limits) { throw error }
        try refuseAliasesAndExcess(text, file: file, limits: limits)
        do {
            let resolver: Resolver = scalars == .asWritten ? .basic : .default
            guard let root = try Yams.compose(yaml: text, resolver, .default, .utf8) else { return nil }
            return YAMLNode(root, file: file, path: "")
        } catch {
            throw syntaxError(error, file: file)
        }
    }

    static func syntaxError(_ error: any Error, file: String) -> YAMLError {
        func at(_ mark: Mark?, _ why: String) -> YAMLError {
            YAMLError(.syntax(why), at: YAMLLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1), path: "")
        }
        guard let yamlError = error as? YamlError else { return at(nil, "\(error)") }
        switch yamlError {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            return at(mark, context.map { "\(problem) (\($0.text))" } ?? problem)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return at(context.mark, "duplicate key \(duplicates.sorted().joined(separator: ", "))")
        default:
            return at(nil, "\(yamlError)".split(separator: "\n").first.map(String.init) ?? "\(yamlError)")
        }
    }
}
