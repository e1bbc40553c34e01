import ParleyIntents

/// The apps that ship with Parley.
public enum BundledApps {
    public static var all: [any ParleyApp] { [CoffeeMakerApp(), SoupChefApp(), TimerApp(), NotesApp()] }
    /// The default primary app (the speaker built into a coffee maker).
    public static let defaultPrimary = CoffeeMakerApp().identifier
}
