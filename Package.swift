// swift-tools-version:6.0
import PackageDescription

// LifeSync takes no third-party Swift packages: Foundation, Dispatch, Glibc and the system's
// sqlite3, libcrypto and libssl are all it links.
let package = Package(
    name: "LifeSync",
    products: [
        // What an embedder links: the sync core alone, or with the runtime that serves it. The other
        // targets are the package's own rooms (their names are `package`, not `public`).
        .library(name: "LifeSync", targets: ["LifeSync"]),
        .library(name: "LifeSyncRuntime", targets: ["LifeSyncRuntime"]),
        .executable(name: "lifesync", targets: ["lifesync"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // TLS for the runtime only: the core never sees it.
        .systemLibrary(
            name: "CSSL",
            pkgConfig: "libssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // What Swift's Glibc module leaves out (mallopt, eventfd), for the runtime only.
        .systemLibrary(name: "CLinux"),
        // One target per layer, every arrow pointing down (README, Layout): the core links no web server.
        // The deterministic core: model, clocks, merge, store, wire codec, session state machines, the node's core.
        .target(name: "LifeSync", dependencies: ["CSQLite", "CCrypto"], linkerSettings: [.linkedLibrary("m")]),
        // HTTP/1.1 as a sans-I/O protocol (like h11): request parser, response serializer, one connection's machine.
        // From the core it takes `JSONValue` (error bodies), `Timestamp` (the Date header) and a whitespace trim only.
        .target(name: "LifeSyncHTTP", dependencies: ["LifeSync"]),
        // The LifeLog REST API on the core and HTTP: routes, metrics, export, the change-event stream, the dashboard.
        // The dashboard's web files are compiled in (`PackageResources`), so no bundle is looked up at run time.
        .target(name: "LifeSyncAPI", dependencies: ["LifeSync", "LifeSyncHTTP"],
                resources: ["index.html", "dashboard.css", "dashboard.js", "dashboard-charts.js", "dashboard-map.js",
                            "dashboard-manage.js", "world.json"].map { .embedInCode("Dashboard/" + $0) }),
        // The thin shell: the system clock and randomness, sockets, files, TLS, the node daemon and its HTTP server.
        .target(name: "LifeSyncRuntime", dependencies: ["LifeSync", "LifeSyncHTTP", "LifeSyncAPI", "CSSL", "CLinux"]),
        // `lifesync conformance`: drives another implementation over TCP through the protocol's cases.
        .target(name: "LifeSyncConformance", dependencies: ["LifeSync", "LifeSyncRuntime"]),
        // Many nodes on virtual time with one seeded PRNG, driving the same core as the daemon.
        // Simulation/scenarios holds the scenario files the README runs (`simulate --scenario`).
        .target(name: "LifeSyncSimulation", dependencies: ["LifeSync"], path: "Simulation", exclude: ["scenarios"]),
        // Command parsing and the commands themselves, kept out of main.swift so tests can call them.
        .target(name: "LifeSyncCLI", dependencies: ["LifeSync", "LifeSyncHTTP", "LifeSyncAPI", "LifeSyncRuntime",
                                                    "LifeSyncConformance", "LifeSyncSimulation"]),
        .executableTarget(name: "lifesync", dependencies: ["LifeSyncCLI"]),
        // The README's library example, built so that it keeps compiling and a test runs it.
        .executableTarget(name: "library-example", dependencies: ["LifeSync", "LifeSyncRuntime"], path: "Examples/Library"),

        .target(name: "TestSupport", dependencies: ["LifeSync", "LifeSyncRuntime", "LifeSyncSimulation"], path: "Tests/TestSupport"),
        .testTarget(name: "LifeSyncTests", dependencies: ["LifeSync", "LifeSyncHTTP", "LifeSyncAPI", "LifeSyncSimulation", "TestSupport"]),
        .testTarget(name: "SimulationTests", dependencies: ["LifeSync", "LifeSyncSimulation", "TestSupport"]),
        .testTarget(name: "LifeSyncRuntimeTests", dependencies: ["LifeSync", "LifeSyncRuntime", "CSSL", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["LifeSyncHTTP", "LifeSyncRuntime", "TestSupport"]),
    ]
)
