"""The public actor API: ``crawlfw.actors`` exports exactly these names."""

import crawlfw.actors


def test_exported_members():
    assert sorted(crawlfw.actors.__all__) == sorted([
        "CrawlActor", "UserActor", "EVENTS", "register_schema", "validate_message",
        "InvalidMessage", "ChildSpec", "RestartIntensity",
    ])
    for name in crawlfw.actors.__all__:
        assert getattr(crawlfw.actors, name) is not None
