package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.elasticsearch.common.ParsingException;
import org.elasticsearch.common.Strings;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.junit.jupiter.api.Test;

/** {@link BlockMatchQueryBuilder}'s JSON and wire forms and its refusals; what it matches is tested on a real node. */
class BlockMatchQueryBuilderTest {
    private static BlockMatchQueryBuilder sample() {
        Map<String, List<String>> tokens = new LinkedHashMap<>();
        tokens.put("neardup.b0", List.of("0:1a2b", "1:ffff"));
        tokens.put("neardup.b1", List.of("0:0000"));
        return new BlockMatchQueryBuilder(tokens, 2);
    }

    private static BlockMatchQueryBuilder checked() {
        Map<String, Object> verify = new LinkedHashMap<>();
        verify.put("sketch_field", "neardup.minhash");
        verify.put("hex_field", "neardup.hex");
        verify.put("sketch", List.of(3L, 70_000L, 4_294_967_295L));
        verify.put("fingerprint", -5L);
        verify.put("max_distance", 3);
        verify.put("min_jaccard", 0.35);
        verify.put("near_jaccard", 0.2);
        verify.put("sketch_size", 128);
        return new BlockMatchQueryBuilder(Map.of("neardup.b0", List.of("0:1a2b")), 1, verify);
    }

    private static BlockMatchQueryBuilder parse(String json) throws IOException {
        try (XContentParser parser = JsonXContent.jsonXContent.createParser(XContentParserConfiguration.EMPTY, json)) {
            parser.nextToken(); // {
            parser.nextToken(); // "neardup_blocks"
            parser.nextToken(); // {
            return BlockMatchQueryBuilder.fromXContent(parser);
        }
    }

    @Test
    void itsJsonParsesBackToAnEqualQuery() throws IOException {
        BlockMatchQueryBuilder query = sample().boost(2f).queryName("blocks");
        String json = Strings.toString(query);
        assertTrue(json.startsWith("{\"neardup_blocks\":{\"tokens\":{\"neardup.b0\":[\"0:1a2b\",\"1:ffff\"]"), json);
        assertEquals(query, parse(json));
        assertEquals(query.hashCode(), parse(json).hashCode());
        assertNotEquals(sample(), parse("{\"neardup_blocks\":{\"tokens\":{\"neardup.b0\":[\"0:1a2b\",\"1:ffff\"],\"neardup.b1\":[\"0:0000\"]}}}"));
    }

    @Test
    void itTravelsBetweenNodesUnchanged() throws IOException {
        for (BlockMatchQueryBuilder query : List.of(sample().boost(0.5f), checked())) {
            try (BytesStreamOutput out = new BytesStreamOutput()) {
                query.writeTo(out);
                assertEquals(query, new BlockMatchQueryBuilder(out.bytes().streamInput()));
            }
        }
    }

    @Test
    void itsCheckParsesBackToTheSameCheck() throws IOException {
        String json = Strings.toString(checked());
        assertTrue(json.contains("\"verify\":{\"sketch_field\":\"neardup.minhash\""), json);
        assertEquals(checked(), parse(json)); // numbers read back as ints or longs: the check they make is the same
        assertNotEquals(checked(), parse(json.replace("\"fingerprint\":-5", "\"fingerprint\":-6")));
        assertNotEquals(sample(), checked());
    }

    @Test
    void badDefinitionsAreRefusedWithTheirReason() {
        ParsingException missing = assertThrows(ParsingException.class, () -> parse("{\"neardup_blocks\":{\"min_shared\":1}}"));
        assertTrue(missing.getMessage().contains("needs [tokens]"), missing.getMessage());
        ParsingException zero = assertThrows(ParsingException.class,
            () -> parse("{\"neardup_blocks\":{\"tokens\":{\"b0\":[\"a\"]},\"min_shared\":0}}"));
        assertTrue(zero.getMessage().contains("at least 1"), zero.getMessage());
        ParsingException number = assertThrows(ParsingException.class, () -> parse("{\"neardup_blocks\":{\"tokens\":{\"b0\":[7]}}}"));
        assertTrue(number.getMessage().contains("must be strings"), number.getMessage());
        ParsingException notList = assertThrows(ParsingException.class, () -> parse("{\"neardup_blocks\":{\"tokens\":{\"b0\":\"a\"}}}"));
        assertTrue(notList.getMessage().contains("must be an array"), notList.getMessage());
        ParsingException badCheck = assertThrows(ParsingException.class,
            () -> parse("{\"neardup_blocks\":{\"tokens\":{\"b0\":[\"a\"]},\"verify\":{\"sketch_field\":\"m\"}}}"));
        assertTrue(badCheck.getMessage().contains("verify needs params"), badCheck.getMessage());
        ParsingException extra = assertThrows(ParsingException.class,
            () -> parse("{\"neardup_blocks\":{\"tokens\":{\"b0\":[\"a\"]},\"verify\":{\"lang\":\"x\"}}}"));
        assertTrue(extra.getMessage().contains("does not take [lang]"), extra.getMessage());
        ParsingException unknown = assertThrows(ParsingException.class,
            () -> parse("{\"neardup_blocks\":{\"tokens\":{\"b0\":[\"a\"]},\"fuzzy\":true}}"));
        assertTrue(unknown.getMessage().contains("does not take [fuzzy]"), unknown.getMessage());
    }
}
