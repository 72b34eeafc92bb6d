"""Build hook: the wheel carries its schema stamp, computed from its own SQL files.

Every database open compares the database's ``user_version`` with the stamp of the
migrations, views and rollups plantune ships (``toolkit.store.db.Schema``): computed at run time,
that reads and hashes the 20 view files on every hook call. An installed wheel's files
never change, so the wheel ships the stamp of exactly the files it holds, computed here
by the same code, and an installed copy reads one small file instead. An editable install
(whose files do change) gets no stamp file and keeps computing it.
"""

import os
import sys
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class SchemaStampHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if self.target_name != "wheel" or version == "editable":
            return
        sys.path.insert(0, self.root)
        try:
            from toolkit.store import db
        finally:
            sys.path.remove(self.root)
        sql = os.path.join(self.root, "sql")
        schema = db.Schema(
            os.path.join(sql, "migrations"),
            os.path.join(sql, "views"),
            rollups_dir=os.path.join(sql, "rollups"),
        )
        fd, self._stamp_file = tempfile.mkstemp(prefix="plantune-schema-stamp-")
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(f"{schema.stamp}\n")
        build_data["force_include"][self._stamp_file] = f"toolkit/sql/{db.STAMP_FILE}"

    def finalize(self, version, build_data, artifact_path):
        stamp_file = getattr(self, "_stamp_file", None)
        if stamp_file and os.path.exists(stamp_file):
            os.unlink(stamp_file)
