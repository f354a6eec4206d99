"""Test environments: the builders' contract, each task's built once per bout, their
repair, the interpreters and Pythons an era needs, uv's resolution of an era, the
package index, the pytest an environment holds, and Python 2 trees and distributions."""
