"""The base of every conformance suite: which plugin is under test, and how it is built."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from bugbout.core.contract.errors import ConfigError
from bugbout.core.contract.manager import Plugins, RegisteredPlugin, make_plugins
from bugbout.core.contract.types import KINDS

UNKNOWN_OPTION = "bugbout-conformance-no-such-option"
"""An option no plugin has: giving it must be a configuration error."""


class PluginSuite:
    """Contract tests every plugin of :attr:`kind` must pass.

    A plugin's tests subclass the suite of its kind and name the plugin::

        from bugbout.testing.suites import JudgeSuite

        class TestCautious(JudgeSuite):
            plugin = "cautious"
            options = {"threshold": 0.9}

    The plugin is looked up by name, with its options, in the plugin manager of the
    :meth:`plugins` fixture: by default ``make_plugins()``, the built-ins and every
    installed entry-point plugin, so an installed plugin is found. Override the fixture
    to test a plugin that is not installed::

        class TestCautious(JudgeSuite):
            plugin = "cautious"

            @pytest.fixture
            def plugins(self, bugbout_plugins, register_plugin):
                register_plugin(my_plugin_module)
                return bugbout_plugins
    """

    kind: ClassVar[str] = ""
    """The plugin kind (``judge``, ``agent``, ...): set by each suite."""
    plugin: ClassVar[str] = ""
    """The name the plugin is registered under: set by the subclass."""
    options: ClassVar[dict[str, Any]] = {}
    """The plugin's options, as written in ``bugbout.yaml`` (dashed keys)."""

    # -- fixtures ---------------------------------------------------------------------------

    @pytest.fixture
    def plugins(self) -> Plugins:
        """The plugin manager the plugin under test is found in."""
        return make_plugins()

    @pytest.fixture
    def registered(self, plugins: Plugins) -> RegisteredPlugin:
        """The plugin's registration record."""
        if not self.plugin:
            pytest.fail(
                f"{type(self).__name__}: set the class attribute `plugin` to the name of the "
                f"{self.kind} plugin under test",
                pytrace=False,
            )
        return plugins.get(self.kind, self.plugin)

    @pytest.fixture
    def plugin_under_test(self, plugins: Plugins, registered: RegisteredPlugin) -> Any:
        """The plugin's implementation, built with :attr:`options`."""
        return plugins.create(self.kind, self.plugin, dict(self.options))

    # -- what every plugin must do ------------------------------------------------------------

    def test_is_registered_under_its_kind(self, registered: RegisteredPlugin) -> None:
        """The registration hook of the kind yields a record of the kind's type."""
        assert self.kind in KINDS
        assert isinstance(registered.spec, KINDS[self.kind])
        assert registered.name == self.plugin

    def test_an_unknown_option_is_a_config_error(self, plugins: Plugins) -> None:
        """The options model forbids unknown keys: a misspelt option is a one-line error
        that names the plugin."""
        with pytest.raises(ConfigError) as error:
            plugins.create(self.kind, self.plugin, {**self.options, UNKNOWN_OPTION: 1})
        message = str(error.value)
        assert "\n" not in message
        assert self.plugin in message

    def test_option_keys_are_written_with_dashes(self, registered: RegisteredPlugin) -> None:
        """Options are keyed like every other setting, ``max-listed`` rather than
        ``max_listed`` (what :class:`bugbout.Options`, the options models' base, does)."""
        fields = registered.spec.options.model_fields.items()
        underscored = [
            field.alias or name for name, field in fields if "_" in (field.alias or name)
        ]
        assert not underscored, f"options keyed with _ (extend bugbout.Options): {underscored}"

    def test_options_validate(self, registered: RegisteredPlugin) -> None:
        """The suite's :attr:`options` are valid options of the plugin."""
        registered.spec.parse_options(dict(self.options))
