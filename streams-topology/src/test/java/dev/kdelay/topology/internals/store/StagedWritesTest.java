package dev.kdelay.topology.internals.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Write batches encoded on the heap, checked against RocksDB's own encoding and a real database.
 */
class StagedWritesTest {

  static {
    RocksDB.loadLibrary();
  }

  @TempDir Path dir;

  @Test
  void shouldEncodeWritesExactlyAsRocksDbDoes() throws Exception {
    // given: puts and deletes with lengths around the varint's byte boundaries, an empty value
    byte[][] keys = {bytes("a"), new byte[127], new byte[128], new byte[300], new byte[20_000]};
    StagedWrites staged = new StagedWrites();
    try (WriteBatch expected = new WriteBatch()) {
      for (int i = 0; i < keys.length; i++) {
        keys[i][0] = (byte) i;
        byte[] value = new byte[keys[keys.length - 1 - i].length];
        staged.put(keys[i], value);
        expected.put(keys[i], value);
        staged.delete(keys[i]);
        expected.delete(keys[i]);
      }
      staged.put(bytes("empty"), new byte[0]);
      expected.put(bytes("empty"), new byte[0]);

      // when / then: the same bytes RocksDB makes through one JNI call per write
      assertThat(staged.encode()).isEqualTo(expected.data());
      try (WriteBatch decoded = staged.toWriteBatch()) {
        assertThat(decoded.count()).isEqualTo(11);
      }
    }
  }

  @Test
  void shouldSortByKeyAndKeepTheOrderOfWritesToOneKey() throws Exception {
    // given: writes out of key order, two to the key "b" (a put, then its delete)
    StagedWrites staged = new StagedWrites();
    staged.put(bytes("c"), bytes("3"));
    staged.put(bytes("b"), bytes("2"));
    staged.put(bytes("a"), bytes("1"));
    staged.delete(bytes("b"));
    staged.put(bytes("\u00ff"), bytes("last")); // sorts after ASCII as unsigned bytes

    // when
    staged.sortByKey();

    // then: key order, and "b" is deleted, not put, once applied
    try (WriteBatch expected = new WriteBatch()) {
      expected.put(bytes("a"), bytes("1"));
      expected.put(bytes("b"), bytes("2"));
      expected.delete(bytes("b"));
      expected.put(bytes("c"), bytes("3"));
      expected.put(bytes("\u00ff"), bytes("last"));
      assertThat(staged.encode()).isEqualTo(expected.data());
    }
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, dir.toString());
        WriteOptions write = new WriteOptions();
        WriteBatch batch = staged.toWriteBatch()) {
      db.write(write, batch);
      assertThat(db.get(bytes("a"))).isEqualTo(bytes("1"));
      assertThat(db.get(bytes("b"))).isNull();
      assertThat(db.get(bytes("\u00ff"))).isEqualTo(bytes("last"));
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
