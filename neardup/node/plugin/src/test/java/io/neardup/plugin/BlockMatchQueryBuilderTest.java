package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.elasticsearch.common.ParsingException;
import org.elasticsearch.common.Strings;
import org.elasticsearch.common.io.stream.BytesStreamOutput;
import org.elasticsearch.index.mapper.BinaryFieldMapper;
import org.elasticsearch.index.mapper.KeywordFieldMapper;
import org.elasticsearch.index.mapper.MappedFieldType;
import org.elasticsearch.index.mapper.NumberFieldMapper;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.junit.jupiter.api.Test;

import io.neardup.search.SketchCheck;

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

    /** {@code min_shared} is a whole number, given as a number or a string of one: never cut, never a bare number error. */
    @Test
    void minSharedIsAWholeNumberOrRefusedNamingIt() throws IOException {
        String tokens = "{\"neardup_blocks\":{\"tokens\":{\"b0\":[\"a\",\"b\"]},\"min_shared\":";
        for (String bad : List.of("1.7", "\"abc\"", "\"1.5\"", "true", "3000000000")) {
            ParsingException e = assertThrows(ParsingException.class, () -> parse(tokens + bad + "}}"));
            assertTrue(e.getMessage().contains("[min_shared]"), bad + ": " + e.getMessage());
        }
        ParsingException negative = assertThrows(ParsingException.class, () -> parse(tokens + "-2}}"));
        assertTrue(negative.getMessage().contains("[min_shared] must be at least 1"), negative.getMessage());
        Map<String, List<String>> ab = Map.of("b0", List.of("a", "b"));
        for (String good : List.of("2", "2.0", "\"2\"")) {
            assertEquals(new BlockMatchQueryBuilder(ab, 2), parse(tokens + good + "}}"), good);
        }
    }

    /** The check's parameters are refused when the query is parsed, each naming the parameter (400, not 0 hits). */
    @Test
    void aBadCheckIsRefusedNamingTheParameter() {
        String head = "{\"neardup_blocks\":{\"tokens\":{\"b0\":[\"a\"]},\"verify\":{\"sketch_field\":\"m\",\"hex_field\":\"h\",";
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("\"fingerprint\":5}}}", "verify needs params");
        cases.put("\"sketch\":\"abc\",\"fingerprint\":5}}}", "[sketch] must be a list");
        cases.put("\"sketch\":[3,1],\"fingerprint\":5}}}", "[sketch] must be distinct values in ascending order");
        cases.put("\"sketch\":[-1],\"fingerprint\":5}}}", "[sketch] item 0");
        cases.put("\"sketch\":[4294967296],\"fingerprint\":5}}}", "[sketch] item 0");
        cases.put("\"sketch\":[1],\"fingerprint\":15000000000000000000.0}}}", "[fingerprint]");
        cases.put("\"sketch\":[1],\"fingerprint\":1180591620717411303424}}}", "[fingerprint]");
        cases.put("\"sketch\":[1],\"fingerprint\":\"ff\"}}}", "[fingerprint]");
        cases.put("\"sketch\":[1],\"fingerprint\":5,\"sketch_size\":0}}}", "[sketch_size]");
        cases.put("\"sketch\":[1],\"fingerprint\":5,\"sketch_size\":1000000000000}}}", "[sketch_size]");
        cases.put("\"sketch\":[1],\"fingerprint\":5,\"max_distance\":65}}}", "[max_distance]");
        cases.put("\"sketch\":[1],\"fingerprint\":5,\"max_distance\":-1}}}", "[max_distance]");
        cases.put("\"sketch\":[1],\"fingerprint\":5,\"min_jaccard\":1.5}}}", "[min_jaccard]");
        cases.put("\"sketch\":[1],\"fingerprint\":5,\"near_jaccard\":-0.5}}}", "[near_jaccard]");
        cases.forEach((tail, expected) -> {
            ParsingException e = assertThrows(ParsingException.class, () -> parse(head + tail));
            assertTrue(e.getMessage().contains(expected), tail + ": " + e.getMessage());
        });
        // the largest unsigned fingerprint is the same 64 bits as -1, which the lookup sends
        assertDoesNotThrow(() -> parse(head + "\"sketch\":[],\"fingerprint\":18446744073709551615}}}"));
    }

    /** From the wire, the fields come in the order they were given (a HashMap's order before), as their JSON shows. */
    @Test
    void theWireKeepsTheOrderOfTheFields() throws IOException {
        Map<String, List<String>> tokens = new LinkedHashMap<>();
        for (String field : List.of("title", "neardup.b3", "body", "a", "neardup.b0", "zeta", "m", "neardup.b2", "x1")) {
            tokens.put(field, List.of("0:1a2b"));
        }
        BlockMatchQueryBuilder query = new BlockMatchQueryBuilder(tokens, 1);
        try (BytesStreamOutput out = new BytesStreamOutput()) {
            query.writeTo(out);
            assertEquals(Strings.toString(query), Strings.toString(new BlockMatchQueryBuilder(out.bytes().streamInput())));
        }
    }

    private static MappedFieldType keyword(String name, boolean docValues) {
        return new KeywordFieldMapper.KeywordFieldType(name, true, docValues, Map.of());
    }

    /** The check's fields must be what it reads: refused naming the parameter, the field and the type it needs. */
    @Test
    void theChecksFieldsMustBeOfTheTypesItReads() {
        Map<String, MappedFieldType> mapped = new HashMap<>();
        mapped.put("neardup.minhash", new BinaryFieldMapper.BinaryFieldType("neardup.minhash"));
        mapped.put("neardup.hex", keyword("neardup.hex", true));
        mapped.put("neardup.fingerprint", new NumberFieldMapper.NumberFieldType("neardup.fingerprint", NumberFieldMapper.NumberType.LONG));
        mapped.put("neardup.cold", keyword("neardup.cold", false));
        assertTrue(mapped.get("neardup.minhash").hasDocValues(), "a binary field made so keeps doc values");
        BlockMatchQueryBuilder.refuseUnreadable(check("neardup.minhash", "neardup.hex"), mapped::get, "");
        Map<List<String>, String> cases = new LinkedHashMap<>();
        cases.put(List.of("neardup.hex", "neardup.hex"),
            "verify param [sketch_field] names [neardup.hex], a [keyword] field; it must be a [binary] field");
        cases.put(List.of("neardup.minhash", "neardup.fingerprint"),
            "verify param [hex_field] names [neardup.fingerprint], a [long] field; it must be a [keyword] field");
        cases.put(List.of("neardup.minhash", "neardup.cold"), "verify reads the doc values of [neardup.cold]");
        cases.put(List.of("nowhere", "neardup.hex"), "verify reads [nowhere], which this index does not map");
        cases.forEach((fields, expected) -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BlockMatchQueryBuilder.refuseUnreadable(check(fields.get(0), fields.get(1)), mapped::get, "[neardup_blocks] "));
            assertEquals("[neardup_blocks] " + expected, e.getMessage().substring(0, ("[neardup_blocks] " + expected).length()));
        });
    }

    private static SketchCheck check(String sketchField, String hexField) {
        return new SketchCheck(sketchField, hexField, new long[] { 1 }, 5, 3, 0.35, 0.2, 128);
    }
}
