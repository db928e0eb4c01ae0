//! Map colours: biome id → colour, block name → colour, legacy numeric block id → name.
//!
//! Biome colours for ids 0–50, their mutated variants (+128, brightened by 40 per channel),
//! bamboo jungle and the nether biomes follow cubiomes' `initBiomeColours` (MIT, © Cubitect;
//! the scheme originates in AMIDST), joined to Bedrock's ids by biome name. Colours for the
//! 1.18+ biomes (Bedrock ids 182–193) and every block colour are this project's own choices.
//! No Mojang texture and no AGPL table is used.

/// (Bedrock id, name, R, G, B) for the base biomes.
const BIOMES: &[(u32, &str, [u8; 3])] = &[
    (0, "ocean", [0, 0, 112]),
    (1, "plains", [141, 179, 96]),
    (2, "desert", [250, 148, 24]),
    (3, "extreme_hills", [96, 96, 96]),
    (4, "forest", [5, 102, 33]),
    (5, "taiga", [11, 102, 89]),
    (6, "swampland", [7, 249, 178]),
    (7, "river", [0, 0, 255]),
    (8, "hell", [255, 0, 0]),
    (9, "the_end", [128, 128, 255]),
    (10, "legacy_frozen_ocean", [112, 112, 214]),
    (11, "frozen_river", [160, 160, 255]),
    (12, "ice_plains", [255, 255, 255]),
    (13, "ice_mountains", [160, 160, 160]),
    (14, "mushroom_island", [255, 0, 255]),
    (15, "mushroom_island_shore", [160, 0, 255]),
    (16, "beach", [250, 222, 85]),
    (17, "desert_hills", [210, 95, 18]),
    (18, "forest_hills", [34, 85, 28]),
    (19, "taiga_hills", [22, 57, 51]),
    (20, "extreme_hills_edge", [114, 120, 154]),
    (21, "jungle", [83, 123, 9]),
    (22, "jungle_hills", [44, 66, 5]),
    (23, "jungle_edge", [98, 139, 23]),
    (24, "deep_ocean", [0, 0, 48]),
    (25, "stone_beach", [162, 162, 132]),
    (26, "cold_beach", [250, 240, 192]),
    (27, "birch_forest", [48, 116, 68]),
    (28, "birch_forest_hills", [31, 95, 50]),
    (29, "roofed_forest", [64, 81, 26]),
    (30, "cold_taiga", [49, 85, 74]),
    (31, "cold_taiga_hills", [36, 63, 54]),
    (32, "mega_taiga", [89, 102, 81]),
    (33, "mega_taiga_hills", [69, 79, 62]),
    (34, "extreme_hills_plus_trees", [80, 112, 80]),
    (35, "savanna", [189, 178, 95]),
    (36, "savanna_plateau", [167, 157, 100]),
    (37, "mesa", [217, 69, 21]),
    (38, "mesa_plateau_stone", [176, 151, 101]),
    (39, "mesa_plateau", [202, 140, 101]),
    (40, "warm_ocean", [0, 0, 172]),
    (41, "deep_warm_ocean", [0, 0, 80]),
    (42, "lukewarm_ocean", [0, 0, 144]),
    (43, "deep_lukewarm_ocean", [0, 0, 64]),
    (44, "cold_ocean", [32, 32, 112]),
    (45, "deep_cold_ocean", [32, 32, 56]),
    (46, "frozen_ocean", [112, 112, 214]),
    (47, "deep_frozen_ocean", [64, 64, 144]),
    (48, "bamboo_jungle", [118, 142, 20]),
    (49, "bamboo_jungle_hills", [59, 71, 10]),
    (140, "ice_plains_spikes", [180, 220, 220]),
    (178, "soulsand_valley", [82, 41, 33]),
    (179, "crimson_forest", [221, 8, 8]),
    (180, "warped_forest", [73, 144, 123]),
    (181, "basalt_deltas", [104, 95, 112]),
    // Strata's own colours for the 1.18+ biomes.
    (182, "jagged_peaks", [220, 220, 230]),
    (183, "frozen_peaks", [176, 190, 224]),
    (184, "snowy_slopes", [200, 210, 220]),
    (185, "grove", [80, 130, 110]),
    (186, "meadow", [110, 180, 90]),
    (187, "lush_caves", [60, 120, 20]),
    (188, "dripstone_caves", [110, 80, 50]),
    (189, "stony_peaks", [130, 140, 120]),
    (190, "deep_dark", [10, 40, 50]),
    (191, "mangrove_swamp", [50, 190, 130]),
    (192, "cherry_grove", [240, 160, 200]),
    (193, "pale_garden", [170, 180, 170]),
];

/// The colour of a biome id; mutated variants (129–167) are their base brightened by 40;
/// unknown ids get a stable hashed colour.
pub fn biome_colour(id: u32) -> [u8; 3] {
    // Ids below 256 (every biome Bedrock has) from a table built once: a map asks per pixel.
    static TABLE: std::sync::OnceLock<[[u8; 3]; 256]> = std::sync::OnceLock::new();
    match TABLE
        .get_or_init(|| std::array::from_fn(|i| biome_colour_uncached(i as u32)))
        .get(id as usize)
    {
        Some(c) => *c,
        None => biome_colour_uncached(id),
    }
}

fn biome_colour_uncached(id: u32) -> [u8; 3] {
    if let Some(&(_, _, c)) = BIOMES.iter().find(|b| b.0 == id) {
        return c;
    }
    if (129..=167).contains(&id) {
        if let Some(&(_, _, c)) = BIOMES.iter().find(|b| b.0 == id - 128) {
            return c.map(|v| v.saturating_add(40));
        }
    }
    hash_colour(&id.to_le_bytes())
}

/// The name of a biome id, when known.
pub fn biome_name(id: u32) -> Option<&'static str> {
    BIOMES.iter().find(|b| b.0 == id).map(|b| b.1)
}

/// Block colours (Strata's own), by name without the `minecraft:` prefix.
const BLOCKS: &[(&str, [u8; 3])] = &[
    ("grass", [96, 150, 60]),
    ("grass_block", [96, 150, 60]),
    ("dirt", [134, 96, 67]),
    ("coarse_dirt", [119, 85, 59]),
    ("podzol", [91, 63, 24]),
    ("mycelium", [111, 99, 105]),
    ("dirt_with_roots", [144, 108, 80]),
    ("mud", [60, 57, 60]),
    ("stone", [125, 125, 125]),
    ("cobblestone", [110, 110, 110]),
    ("mossy_cobblestone", [100, 120, 90]),
    ("granite", [149, 103, 85]),
    ("diorite", [188, 188, 188]),
    ("andesite", [136, 136, 136]),
    ("deepslate", [80, 80, 82]),
    ("tuff", [108, 109, 102]),
    ("calcite", [223, 224, 220]),
    ("bedrock", [60, 60, 60]),
    ("gravel", [131, 127, 126]),
    ("sand", [219, 207, 163]),
    ("red_sand", [190, 102, 33]),
    ("sandstone", [216, 203, 155]),
    ("red_sandstone", [186, 99, 29]),
    ("clay", [160, 166, 179]),
    ("water", [52, 90, 180]),
    ("flowing_water", [52, 90, 180]),
    ("lava", [207, 92, 20]),
    ("flowing_lava", [207, 92, 20]),
    ("ice", [145, 183, 253]),
    ("packed_ice", [141, 180, 250]),
    ("blue_ice", [116, 167, 253]),
    ("snow", [249, 254, 254]),
    ("snow_layer", [240, 250, 250]),
    ("powder_snow", [248, 253, 253]),
    ("oak_leaves", [60, 110, 30]),
    ("leaves", [60, 110, 30]),
    ("leaves2", [70, 100, 30]),
    ("spruce_leaves", [45, 80, 45]),
    ("birch_leaves", [90, 130, 60]),
    ("jungle_leaves", [50, 120, 20]),
    ("acacia_leaves", [80, 110, 30]),
    ("dark_oak_leaves", [40, 90, 20]),
    ("azalea_leaves", [90, 120, 40]),
    ("mangrove_leaves", [60, 120, 40]),
    ("cherry_leaves", [230, 170, 200]),
    ("log", [102, 81, 51]),
    ("oak_log", [102, 81, 51]),
    ("spruce_log", [58, 37, 16]),
    ("birch_log", [216, 215, 210]),
    ("planks", [162, 130, 78]),
    ("oak_planks", [162, 130, 78]),
    ("tallgrass", [80, 140, 50]),
    ("short_grass", [80, 140, 50]),
    ("tall_grass", [80, 140, 50]),
    ("fern", [70, 120, 50]),
    ("double_plant", [90, 150, 60]),
    ("yellow_flower", [240, 220, 40]),
    ("red_flower", [200, 40, 40]),
    ("dandelion", [240, 220, 40]),
    ("poppy", [200, 40, 40]),
    ("seagrass", [40, 100, 60]),
    ("kelp", [50, 110, 40]),
    ("cactus", [85, 127, 43]),
    ("reeds", [148, 192, 101]),
    ("sugar_cane", [148, 192, 101]),
    ("pumpkin", [198, 118, 24]),
    ("melon_block", [111, 145, 30]),
    ("netherrack", [97, 38, 38]),
    ("soul_sand", [81, 62, 50]),
    ("soul_soil", [75, 57, 46]),
    ("basalt", [80, 81, 86]),
    ("blackstone", [42, 36, 41]),
    ("crimson_nylium", [130, 31, 31]),
    ("warped_nylium", [43, 114, 101]),
    ("glowstone", [171, 131, 84]),
    ("end_stone", [219, 222, 158]),
    ("obsidian", [20, 18, 29]),
    ("moss_block", [89, 109, 45]),
    ("glass", [200, 220, 230]),
    ("wool", [233, 236, 236]),
    ("white_wool", [233, 236, 236]),
    ("brick_block", [150, 97, 83]),
    ("stonebrick", [122, 121, 122]),
    ("stone_bricks", [122, 121, 122]),
    ("torch", [255, 210, 90]),
    ("farmland", [115, 75, 45]),
    ("grass_path", [148, 122, 65]),
    ("dirt_path", [148, 122, 65]),
    ("hay_block", [166, 136, 38]),
    ("bookshelf", [117, 94, 59]),
    ("fence", [162, 130, 78]),
    ("oak_fence", [162, 130, 78]),
    ("web", [220, 220, 220]),
];

/// The colour of a block name (`minecraft:` prefix optional); unknown names get a stable
/// hashed colour.
pub fn block_colour(name: &str) -> [u8; 3] {
    let short = name.strip_prefix("minecraft:").unwrap_or(name);
    BLOCKS
        .iter()
        .find(|b| b.0 == short)
        .map_or_else(|| hash_colour(short.as_bytes()), |b| b.1)
}

/// The block names of the pre-flattening numeric ids (LegacyTerrain), for the common ones.
pub fn legacy_block_name(id: u8) -> Option<&'static str> {
    Some(match id {
        1 => "stone",
        2 => "grass",
        3 => "dirt",
        4 => "cobblestone",
        5 => "planks",
        7 => "bedrock",
        8 | 9 => "water",
        10 | 11 => "lava",
        12 => "sand",
        13 => "gravel",
        17 => "log",
        18 => "leaves",
        20 => "glass",
        24 => "sandstone",
        31 => "tallgrass",
        35 => "wool",
        37 => "yellow_flower",
        38 => "red_flower",
        45 => "brick_block",
        47 => "bookshelf",
        48 => "mossy_cobblestone",
        49 => "obsidian",
        50 => "torch",
        60 => "farmland",
        78 => "snow_layer",
        79 => "ice",
        80 => "snow",
        81 => "cactus",
        82 => "clay",
        83 => "reeds",
        85 => "fence",
        86 => "pumpkin",
        87 => "netherrack",
        88 => "soul_sand",
        89 => "glowstone",
        98 => "stonebrick",
        103 => "melon_block",
        110 => "mycelium",
        121 => "end_stone",
        161 => "leaves2",
        170 => "hay_block",
        174 => "packed_ice",
        198 => "grass_path",
        243 => "podzol",
        _ => return None,
    })
}

/// The colour of a legacy numeric block id.
pub fn legacy_block_colour(id: u8) -> [u8; 3] {
    match legacy_block_name(id) {
        Some(name) => block_colour(name),
        None => hash_colour(&[b'#', id]),
    }
}

/// A stable colour from bytes (FNV-1a), kept away from black and white.
pub fn hash_colour(bytes: &[u8]) -> [u8; 3] {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    [
        48 + (h & 0xFF) as u8 % 160,
        48 + ((h >> 8) & 0xFF) as u8 % 160,
        48 + ((h >> 16) & 0xFF) as u8 % 160,
    ]
}

/// Brightens (positive) or darkens (negative) a colour by `delta` per channel.
pub fn shade(c: [u8; 3], delta: i32) -> [u8; 3] {
    c.map(|v| (v as i32 + delta).clamp(0, 255) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(biome_colour(1), [141, 179, 96]);
        assert_eq!(biome_colour(129), [181, 219, 136]); // sunflower plains
        assert_eq!(biome_colour(999), biome_colour(999));
        assert_eq!(biome_name(35), Some("savanna"));
        assert_eq!(block_colour("minecraft:water"), [52, 90, 180]);
        assert_eq!(block_colour("stone"), [125, 125, 125]);
        assert_eq!(legacy_block_colour(9), block_colour("water"));
        let h = block_colour("minecraft:some_mod_block");
        assert!(h.iter().all(|&v| (48..208).contains(&v)));
        assert_eq!(shade([250, 5, 100], 10), [255, 15, 110]);
        assert!(BLOCKS.len() >= 60);
    }
}
