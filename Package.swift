// swift-tools-version:6.0
import PackageDescription

// LifeSync takes no third-party Swift packages: Foundation, Dispatch, Glibc and the system's
// sqlite3, libcrypto and libssl are all it links.
let package = Package(
    name: "LifeSync",
    products: [
        .library(name: "LifeSync", targets: ["LifeSync"]),
        .library(name: "LifeSyncRuntime", targets: ["LifeSyncRuntime"]),
        .library(name: "LifeSyncSimulation", targets: ["LifeSyncSimulation"]),
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
        // The deterministic core: model, clocks, merge, store, wire codec, session state machines.
        // The dashboard's web files are compiled in (`PackageResources`), so no bundle is looked up at run time.
        .target(name: "LifeSync", dependencies: ["CSQLite", "CCrypto"],
                resources: ["index.html", "dashboard.css", "dashboard.js", "dashboard-charts.js", "dashboard-map.js",
                            "dashboard-manage.js", "world.json"].map { .embedInCode("API/Dashboard/" + $0) },
                linkerSettings: [.linkedLibrary("m")]),
        // The thin shell: the system clock and randomness, sockets, files, the node daemon.
        .target(name: "LifeSyncRuntime", dependencies: ["LifeSync", "CSSL", "CLinux"]),
        // Many nodes on virtual time with one seeded PRNG, driving the same core as the daemon.
        // Simulation/scenarios holds the scenario files the README runs (`simulate --scenario`).
        .target(name: "LifeSyncSimulation", dependencies: ["LifeSync"], path: "Simulation", exclude: ["scenarios"]),
        // Command parsing and the commands themselves, kept out of main.swift so tests can call them.
        .target(name: "LifeSyncCLI", dependencies: ["LifeSync", "LifeSyncRuntime", "LifeSyncSimulation"]),
        .executableTarget(name: "lifesync", dependencies: ["LifeSyncCLI"]),
        // The README's library example, built so that it keeps compiling and a test runs it.
        .executableTarget(name: "library-example", dependencies: ["LifeSync", "LifeSyncRuntime"], path: "Examples/Library"),

        .target(name: "TestSupport", dependencies: ["LifeSync", "LifeSyncRuntime", "LifeSyncSimulation"], path: "Tests/TestSupport"),
        .testTarget(name: "LifeSyncTests", dependencies: ["LifeSync", "LifeSyncSimulation", "TestSupport"]),
        .testTarget(name: "SimulationTests", dependencies: ["LifeSync", "LifeSyncSimulation", "TestSupport"]),
        .testTarget(name: "LifeSyncRuntimeTests", dependencies: ["LifeSync", "LifeSyncRuntime", "CSSL", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["LifeSyncRuntime", "TestSupport"]),
    ]
)
